// Handlers of the MCP methods, shared by both eras. Unknown names are protocol errors
// raised before a handler runs; everything that goes wrong inside a tool becomes an
// isError result (STYLE.md: decide tool error vs protocol error in one place).
import { ErrorCodes, isAppError } from '../core/errors.js';
import type { ToolResult } from '../core/content.js';
import type { Principal } from '../core/principal.js';
import { LOG_LEVELS, type CallContext, type LogLevel, type ToolSpec } from '../core/specs.js';
import type { Registry } from '../tools/registry.js';
import { buildContext, progressTokenOf, type ContextExtender } from './call-context.js';
import type { Exchange } from './exchange.js';
import {
  InputRequiredSignal,
  inputRequiredResult,
  modernRequestInput,
  openRound,
  targetOf,
} from './input-required.js';
import { isObject, RpcCodes, RpcError, type JsonRpcId } from './jsonrpc.js';
import { paginate } from './pagination.js';
import { prebuild } from './serialize.js';
import type { Signer } from '../core/signed.js';
import { ALL_VERSIONS, negotiateLegacy } from './versions.js';

export interface FeatureOptions {
  registry: Registry;
  serverInfo: { name: string; version: string; title?: string; description?: string };
  instructions?: string | null;
  toolDescriptionSuffix?: string | null;
  signer: Signer;
  pageSize?: number;
  /** ttlMs hint on modern-era lists and reads. */
  listTtlMs?: number;
  /** Test compositions only (the conformance fixture server): see ContextInput.extend. */
  extendContext?: ContextExtender;
}

export interface RequestScope {
  era: 'legacy' | 'modern';
  id: JsonRpcId;
  exchange: Exchange;
  clientCapabilities: Record<string, unknown>;
  logLevel: LogLevel | null;
  protocolVersion: string;
  /** Filled in for the exchange log: the code behind a tool error (SQLSTATE or PGMCP code). */
  note?: { errorCode?: string | number } | undefined;
}

type Handler = (
  params: Record<string, unknown>,
  scope: RequestScope,
) => Promise<Record<string, unknown>>;

export interface Features {
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string };
  initialize: Handler;
  setLevel: Handler;
  subscribe: Handler;
  unsubscribe: Handler;
  discover: Handler;
  listTools: Handler;
  callTool: Handler;
  listResources: Handler;
  listTemplates: Handler;
  readResource: Handler;
  listPrompts: Handler;
  getPrompt: Handler;
  complete: Handler;
}

/**
 * -32001 from a tool, resource or prompt (not from HTTP authentication, which answers 401 with
 * WWW-Authenticate before the dispatcher runs): in the 2026-07-28 era HTTP 400, like the era's
 * other request errors, so clients read the JSON-RPC error (SDK clients treat a 401 or 403 as
 * an authorization challenge and never show the body).
 */
const AUTH_REQUIRED_STATUS = 400;

/** Anything a list holds: it may be shown to some callers only. */
interface Gated {
  visibleTo?(principal: Principal): boolean;
}

const canSee = (item: Gated, principal: Principal): boolean =>
  item.visibleTo === undefined || item.visibleTo(principal);

/**
 * A hidden item called by name. A caller without an identity is told to authenticate (-32001,
 * as for a requiresAuth handler or an @authorize routine it can see); signing in may reveal it.
 * An identified caller who still may not see it gets the unknown-name answer: nothing it can
 * do would change that, so the name's existence is not confirmed.
 */
function hiddenError(
  kind: string,
  name: string,
  principal: Principal,
  unknown: RpcError,
): RpcError {
  if (principal.kind !== 'anonymous' && principal.userId !== null) return unknown;
  return new RpcError(
    RpcCodes.AUTH_REQUIRED,
    `Authentication required: the ${kind} ${name} needs an authenticated caller.`,
    undefined,
    AUTH_REQUIRED_STATUS,
  );
}

function requireString(params: Record<string, unknown>, key: string): string {
  const value = params[key];
  if (typeof value !== 'string' || value === '') {
    throw new RpcError(RpcCodes.INVALID_PARAMS, `params.${key} must be a non-empty string.`);
  }
  return value;
}

export function createFeatures(options: FeatureOptions): Features {
  const { registry, signer } = options;
  const pageSize = options.pageSize ?? 100;
  const ttlMs = options.listTtlMs ?? 60_000;
  const suffix = options.toolDescriptionSuffix?.trim();
  const serverInfo = { name: options.serverInfo.name, version: options.serverInfo.version };
  const capabilities = {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
    logging: {},
  };

  // Whether a list snapshot holds any per-caller item; the registry's snapshots are rebuilt
  // only when a list changes, so this is computed once per snapshot.
  const gatedLists = new WeakMap<readonly Gated[], boolean>();
  /** What this caller may see of a list (order kept), and the cache scope that answer needs. */
  const visible = <T extends Gated>(
    items: readonly T[],
    principal: Principal,
  ): { items: readonly T[]; cacheScope: 'public' | 'private' } => {
    let gated = gatedLists.get(items);
    if (gated === undefined) {
      gated = items.some((item) => item.visibleTo !== undefined);
      gatedLists.set(items, gated);
    }
    if (!gated) return { items, cacheScope: 'public' };
    return { items: items.filter((item) => canSee(item, principal)), cacheScope: 'private' };
  };

  const cacheHints = (
    scope: RequestScope,
    cacheScope: 'public' | 'private',
  ): Record<string, unknown> => (scope.era === 'modern' ? { ttlMs, cacheScope } : {});

  /**
   * Runs a handler with a CallContext; in the modern era also the input-required rounds.
   * Returns the handler's value, or an input-required result.
   */
  const withContext = async <T>(
    params: Record<string, unknown>,
    scope: RequestScope,
    target: { method: string; name: string; args: unknown },
    body: (ctx: CallContext) => Promise<T>,
  ): Promise<{ value: T } | { inputRequired: Record<string, unknown> }> => {
    // A bad requestState is refused before anything is registered for this request.
    const round =
      scope.era === 'modern'
        ? openRound(signer, targetOf(target.method, target.name, target.args), params)
        : undefined;
    const controller = new AbortController();
    const outer = scope.exchange.signal;
    const onOuterAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) controller.abort(outer.reason);
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    scope.exchange.inFlight?.set(scope.id, controller);
    const built = buildContext({
      exchange: scope.exchange,
      principal: scope.exchange.principal,
      signal: controller.signal,
      progressToken: progressTokenOf(params),
      logLevel: scope.logLevel,
      clientCapabilities: scope.clientCapabilities,
      requestInput: round ? modernRequestInput(round, scope.clientCapabilities) : undefined,
      round: round?.round,
      extend: options.extendContext,
    });
    try {
      return { value: await body(built.ctx) };
    } catch (error) {
      // Authentication is the caller's problem, not the tool's: a protocol error (-32001).
      if (isAppError(error) && error.category === 'auth') {
        throw new RpcError(RpcCodes.AUTH_REQUIRED, error.message, undefined, AUTH_REQUIRED_STATUS);
      }
      if (error instanceof InputRequiredSignal && round) {
        return { inputRequired: inputRequiredResult(signer, round, error) };
      }
      if (
        isAppError(error) &&
        error.code === ErrorCodes.CAPABILITY_MISSING &&
        scope.era === 'modern'
      ) {
        throw new RpcError(RpcCodes.MISSING_CAPABILITY, error.message, {
          requiredCapabilities: error.details?.['requiredCapabilities'] ?? {},
        });
      }
      throw error;
    } finally {
      built.finish();
      scope.exchange.inFlight?.delete(scope.id);
      outer?.removeEventListener('abort', onOuterAbort);
    }
  };

  const wireTool = (spec: ToolSpec): Record<string, unknown> => {
    const tool: Record<string, unknown> = {
      name: spec.name,
      description: suffix ? `${spec.description} ${suffix}` : spec.description,
      inputSchema: spec.inputSchema,
    };
    if (spec.title !== undefined) tool['title'] = spec.title;
    if (spec.outputSchema !== undefined) tool['outputSchema'] = spec.outputSchema;
    if (spec.annotations !== undefined) tool['annotations'] = spec.annotations;
    return tool;
  };
  /**
   * Pages of the whole (ungated) tools list in wire form, built and serialized once: the
   * registry hands out the same list until it changes, so the list is the cache key.
   */
  const pages = new WeakMap<readonly ToolSpec[], Map<string, Record<string, unknown>[]>>();
  const toolPage = (
    list: readonly ToolSpec[],
    cursor: unknown,
    items: readonly ToolSpec[],
  ): Record<string, unknown>[] => {
    if (list !== registry.tools()) return items.map(wireTool); // filtered for this caller
    let byCursor = pages.get(list);
    if (!byCursor) pages.set(list, (byCursor = new Map()));
    const key = typeof cursor === 'string' ? cursor : '';
    let page = byCursor.get(key);
    if (!page) byCursor.set(key, (page = prebuild(items.map(wireTool))));
    return page;
  };

  const toolError = (message: string): ToolResult => ({
    content: [{ type: 'text', text: message }],
    isError: true,
  });

  return {
    capabilities,
    serverInfo,

    async initialize(params, scope) {
      const session = scope.exchange.session;
      if (!session)
        throw new RpcError(
          RpcCodes.INVALID_REQUEST,
          'initialize needs a connection that keeps a session.',
        );
      const version = negotiateLegacy(params['protocolVersion']);
      session.protocolVersion = version;
      session.clientCapabilities = isObject(params['capabilities']) ? params['capabilities'] : {};
      session.clientInfo = isObject(params['clientInfo']) ? params['clientInfo'] : null;
      const result: Record<string, unknown> = {
        protocolVersion: version,
        capabilities,
        serverInfo: { ...options.serverInfo },
      };
      if (options.instructions) result['instructions'] = options.instructions;
      return result;
    },

    async setLevel(params, scope) {
      const level = params['level'];
      if (!LOG_LEVELS.includes(level as LogLevel)) {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Unknown log level ${JSON.stringify(level)}; use one of ${LOG_LEVELS.join(', ')}.`,
        );
      }
      if (scope.exchange.session) scope.exchange.session.logLevel = level as LogLevel;
      return {};
    },

    async subscribe(params, scope) {
      scope.exchange.session?.subscriptions.add(requireString(params, 'uri'));
      return {};
    },

    async unsubscribe(params, scope) {
      scope.exchange.session?.subscriptions.delete(requireString(params, 'uri'));
      return {};
    },

    async discover(_params, scope) {
      const result: Record<string, unknown> = {
        supportedVersions: [...ALL_VERSIONS],
        capabilities,
        serverInfo: { ...options.serverInfo },
        ...cacheHints(scope, 'public'),
      };
      if (options.instructions) result['instructions'] = options.instructions;
      return result;
    },

    async listTools(params, scope) {
      const shown = visible(registry.tools(), scope.exchange.principal);
      const page = paginate(signer, 'tools', shown.items, params['cursor'], pageSize);
      const tools = toolPage(shown.items, params['cursor'], page.items);
      return { tools, ...page.next, ...cacheHints(scope, shown.cacheScope) };
    },

    async callTool(params, scope) {
      const name = requireString(params, 'name');
      const entry = registry.tool(name);
      const unknownTool = (): RpcError =>
        new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Unknown tool: ${name}. Call tools/list to see the tools.`,
        );
      if (!entry) throw unknownTool();
      const principal = scope.exchange.principal;
      if (!canSee(entry.spec, principal)) throw hiddenError('tool', name, principal, unknownTool());
      const args = params['arguments'] ?? {};
      if (!isObject(args))
        return { ...toolError(`Invalid arguments for ${name}: arguments must be an object.`) };
      const issues = entry.validate(args);
      if (issues) return { ...toolError(`Invalid arguments for ${name}: ${issues.join('; ')}.`) };
      try {
        const outcome = await withContext(
          params,
          scope,
          { method: 'tools/call', name, args },
          (ctx) => entry.spec.call(args, ctx),
        );
        if ('inputRequired' in outcome) return outcome.inputRequired;
        return { ...outcome.value };
      } catch (error) {
        if (error instanceof RpcError) throw error;
        if (isAppError(error) && error.category !== 'internal') {
          if (scope.note) {
            const sqlstate = error.details?.['sqlstate'];
            scope.note.errorCode = typeof sqlstate === 'string' ? sqlstate : error.code;
          }
          const result = toolError(error.message);
          // structuredContent must conform to an outputSchema, which describes success only
          // (clients validate it even on errors); the text already carries the details.
          const details = error.details && Object.keys(error.details).length > 0;
          if (details && entry.spec.outputSchema === undefined) {
            result.structuredContent = { error: { code: error.code, ...error.details } };
          }
          return { ...result };
        }
        throw error;
      }
    },

    async listResources(params, scope) {
      const shown = visible(registry.resources(), scope.exchange.principal);
      const page = paginate(signer, 'resources', shown.items, params['cursor'], pageSize);
      const resources = page.items.map((r) => {
        const item: Record<string, unknown> = { uri: r.uri, name: r.name };
        if (r.title !== undefined) item['title'] = r.title;
        if (r.description !== undefined) item['description'] = r.description;
        if (r.mimeType !== undefined) item['mimeType'] = r.mimeType;
        return item;
      });
      return { resources, ...page.next, ...cacheHints(scope, shown.cacheScope) };
    },

    async listTemplates(params, scope) {
      const shown = visible(registry.templates(), scope.exchange.principal);
      const page = paginate(signer, 'templates', shown.items, params['cursor'], pageSize);
      const resourceTemplates = page.items.map((t) => {
        const item: Record<string, unknown> = { uriTemplate: t.uriTemplate, name: t.name };
        if (t.title !== undefined) item['title'] = t.title;
        if (t.description !== undefined) item['description'] = t.description;
        if (t.mimeType !== undefined) item['mimeType'] = t.mimeType;
        return item;
      });
      return { resourceTemplates, ...page.next, ...cacheHints(scope, shown.cacheScope) };
    },

    async readResource(params, scope) {
      const uri = requireString(params, 'uri');
      const direct = registry.resource(uri);
      const matched = direct ? undefined : registry.matchTemplate(uri);
      const notFound = (message: string): RpcError =>
        new RpcError(
          scope.era === 'modern' ? RpcCodes.INVALID_PARAMS : RpcCodes.RESOURCE_NOT_FOUND,
          message,
          { uri },
          404,
        );
      if (!direct && !matched) throw notFound(`Resource not found: ${uri}`);
      const principal = scope.exchange.principal;
      if (!canSee(direct ?? matched!.template, principal)) {
        throw hiddenError('resource', uri, principal, notFound(`Resource not found: ${uri}`));
      }
      const outcome = await withContext(
        params,
        scope,
        { method: 'resources/read', name: uri, args: {} },
        (ctx) => (direct ? direct.read(ctx) : matched!.template.read(uri, matched!.vars, ctx)),
      ).catch((error: unknown) => {
        // A template that matched the URI's shape may still find nothing there.
        if (isAppError(error) && error.category === 'not_found') throw notFound(error.message);
        if (isAppError(error) && error.category === 'input') {
          throw new RpcError(RpcCodes.INVALID_PARAMS, error.message, { uri });
        }
        throw error;
      });
      if ('inputRequired' in outcome) return outcome.inputRequired;
      return { ...outcome.value, ...cacheHints(scope, 'private') };
    },

    async listPrompts(params, scope) {
      const shown = visible(registry.prompts(), scope.exchange.principal);
      const page = paginate(signer, 'prompts', shown.items, params['cursor'], pageSize);
      const prompts = page.items.map((p) => {
        const item: Record<string, unknown> = { name: p.name };
        if (p.title !== undefined) item['title'] = p.title;
        if (p.description !== undefined) item['description'] = p.description;
        if (p.arguments !== undefined) item['arguments'] = p.arguments;
        return item;
      });
      return { prompts, ...page.next, ...cacheHints(scope, shown.cacheScope) };
    },

    async getPrompt(params, scope) {
      const name = requireString(params, 'name');
      const prompt = registry.prompt(name);
      const unknownPrompt = (): RpcError =>
        new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Unknown prompt: ${name}. Call prompts/list to see the prompts.`,
        );
      if (!prompt) throw unknownPrompt();
      const principal = scope.exchange.principal;
      if (!canSee(prompt, principal)) throw hiddenError('prompt', name, principal, unknownPrompt());
      const raw = params['arguments'] ?? {};
      if (!isObject(raw))
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          'params.arguments must be an object of strings.',
        );
      const args: Record<string, string> = {};
      for (const [key, value] of Object.entries(raw)) {
        if (typeof value !== 'string') {
          throw new RpcError(RpcCodes.INVALID_PARAMS, `Prompt argument ${key} must be a string.`);
        }
        args[key] = value;
      }
      const missing = (prompt.arguments ?? []).filter(
        (a) => a.required && args[a.name] === undefined,
      );
      if (missing.length > 0) {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Missing required argument${missing.length > 1 ? 's' : ''} for prompt ${name}: ${missing.map((a) => a.name).join(', ')}.`,
        );
      }
      const outcome = await withContext(
        params,
        scope,
        { method: 'prompts/get', name, args },
        (ctx) => prompt.get(args, ctx),
      );
      if ('inputRequired' in outcome) return outcome.inputRequired;
      return { ...outcome.value };
    },

    async complete(params, scope) {
      const principal = scope.exchange.principal;
      const ref = params['ref'];
      const argument = params['argument'];
      if (!isObject(ref) || !isObject(argument) || typeof argument['name'] !== 'string') {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          'completion/complete needs ref and argument {name, value}.',
        );
      }
      const value = typeof argument['value'] === 'string' ? argument['value'] : '';
      const context =
        isObject(params['context']) && isObject(params['context']['arguments'])
          ? (Object.fromEntries(
              Object.entries(params['context']['arguments']).filter(
                ([, v]) => typeof v === 'string',
              ),
            ) as Record<string, string>)
          : {};
      let completer;
      if (ref['type'] === 'ref/prompt') {
        const found = registry.prompt(String(ref['name']));
        // A hidden prompt or template completes like an unknown one.
        const prompt = found && canSee(found, principal) ? found : undefined;
        if (!prompt)
          throw new RpcError(RpcCodes.INVALID_PARAMS, `Unknown prompt: ${String(ref['name'])}`);
        completer = prompt.complete?.bind(prompt);
      } else if (ref['type'] === 'ref/resource') {
        const uri = String(ref['uri']);
        const template = registry
          .templates()
          .find((t) => t.uriTemplate === uri && canSee(t, principal));
        const resource = registry.resource(uri);
        if (!template && !(resource && canSee(resource, principal))) {
          throw new RpcError(RpcCodes.INVALID_PARAMS, `Unknown resource or template: ${uri}`);
        }
        completer = template?.complete?.bind(template);
      } else {
        throw new RpcError(RpcCodes.INVALID_PARAMS, 'ref.type must be ref/prompt or ref/resource.');
      }
      const found = completer ? await completer(argument['name'], value, context) : { values: [] };
      const values = found.values.slice(0, 100);
      const completion: Record<string, unknown> = { values };
      const total = found.total ?? found.values.length;
      completion['total'] = total;
      completion['hasMore'] = found.hasMore ?? total > values.length;
      return { completion };
    },
  };
}
