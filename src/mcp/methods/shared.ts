// What every MCP method handler shares: the request's scope, per-caller visibility of list
// items, cache hints, and running a handler with a CallContext (and, in the modern era,
// its input-required rounds).
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { Principal } from '../../core/principal.js';
import type { CallContext, DatabaseChoice, LogLevel } from '../../core/specs.js';
import type { Signer } from '../../core/signed.js';
import type { DatabaseDirectory } from '../../tools/databases.js';
import { canUse, inScope, type Gated } from '../../tools/gate.js';
import type { Registry } from '../../tools/registry.js';
import type { ToolCallSink } from '../../tools/tool-call-record.js';
import type { AppViews } from '../apps.js';
import { buildContext, progressTokenOf } from '../call-context.js';
import type { RequestChannel } from '../channel.js';
import { authRequired, forbidden, protocolErrorOf } from '../errors.js';
import {
  answeredFirst,
  InputRequiredSignal,
  inputRequiredResult,
  modernRequestInput,
  openRound,
  targetOf,
} from '../input-required.js';
import { RpcCodes, RpcError, type JsonRpcId } from '../jsonrpc.js';
import { paginate } from '../pagination.js';
import type { TaskService } from '../tasks/service.js';

export interface FeatureOptions {
  registry: Registry;
  serverInfo: { name: string; version: string; title?: string; description?: string };
  instructions?: string | null;
  toolDescriptionSuffix?: string | null;
  signer: Signer;
  pageSize?: number;
  /** ttlMs hint on modern-era lists and reads. */
  listTtlMs?: number;
  /**
   * Leave out of lists what the caller may not use (auth.filterToolsByRole). Off: every item
   * is listed, so an agent can find it and be asked to authenticate, and use is checked.
   */
  filterByAccess?: boolean;
  /** Several configured databases: each call learns the session's selection through its context. */
  databases?: Pick<DatabaseDirectory, 'selectFor'>;
  /** Where a tool answer that does not match its outputSchema is reported (with a reference). */
  logger?: Pick<Logger, 'error'>;
  /** Where the invocation step records each tool call (the exchange log and the audit). */
  onToolCall?: ToolCallSink;
  /**
   * Aborted when a stopping server waits no longer for the calls in flight
   * (server.shutdownTimeoutMs): each is cancelled, its statement in PostgreSQL too.
   */
  stopCalls?: AbortSignal;
  /** Tasks (tools that declare taskSupport): where they are kept and run. Absent: no tasks. */
  tasks?: TaskService;
  /**
   * The built MCP Apps views (mcp/apps.ts findAppViews); absent or null: no views, so no tool
   * links and no extension declared, whatever the client says.
   */
  apps?: AppViews | null;
}

export interface RequestScope {
  era: 'legacy' | 'modern';
  id: JsonRpcId;
  channel: RequestChannel;
  clientCapabilities: Record<string, unknown>;
  logLevel: LogLevel | null;
  protocolVersion: string;
  /**
   * Filled in for the exchange log: the database a call used; `recorded` once the invocation
   * step has recorded a tools/call itself (the dispatcher then records nothing more).
   */
  note?: { database?: string; recorded?: boolean } | undefined;
}

export type Handler = (
  params: Record<string, unknown>,
  scope: RequestScope,
) => Promise<Record<string, unknown>>;

export { canUse, inScope, type Gated };

/**
 * The answer to using an item the caller may not: a caller without an identity is asked to
 * authenticate (-32001; HTTP 401 with a challenge), a signed-in caller is refused for want of
 * a role (HTTP 403, insufficient_scope).
 */
export function deniedError(
  kind: string,
  name: string,
  principal: Principal,
  requiredRoles?: readonly string[],
): RpcError {
  if (principal.kind === 'anonymous' || principal.userId === null) {
    return authRequired(
      `Authentication required: the ${kind} ${name} needs an authenticated caller.`,
    );
  }
  return forbidden(`Forbidden: your roles do not allow the ${kind} ${name}.`, requiredRoles);
}

/** -32602 for a tool or prompt that does not exist, or that this caller cannot know of. */
export function unknownError(kind: 'tool' | 'prompt', name: string): RpcError {
  return new RpcError(
    RpcCodes.INVALID_PARAMS,
    `Unknown ${kind}: ${name}. Call ${kind}s/list to see the ${kind}s.`,
  );
}

/** The named tool or prompt, if it exists (-32602 otherwise) and this caller may use it. */
export function usable<T extends Gated>(
  kind: 'tool' | 'prompt',
  name: string,
  found: T | undefined,
  principal: Principal,
): T {
  if (!found || !inScope(found, principal)) throw unknownError(kind, name);
  if (!canUse(found, principal)) throw deniedError(kind, name, principal, found.requiredRoles);
  return found;
}

export function requireString(params: Record<string, unknown>, key: string): string {
  const value = params[key];
  if (typeof value !== 'string' || value === '') {
    throw new RpcError(RpcCodes.INVALID_PARAMS, `params.${key} must be a non-empty string.`);
  }
  return value;
}

export interface Shared {
  /** What this caller may see of a list (order kept), and the cache scope that answer needs. */
  visible<T extends Gated>(
    items: readonly T[],
    principal: Principal,
  ): { items: readonly T[]; cacheScope: 'public' | 'private' };
  cacheHints(scope: RequestScope, cacheScope: 'public' | 'private'): Record<string, unknown>;
  /**
   * One page of a resource, template or prompt list as this caller sees it: `key` holds the
   * items in wire form (the named fields, the optional ones only when set).
   */
  listPage<T extends Gated>(
    kind: 'resources' | 'templates' | 'prompts',
    key: string,
    items: readonly T[],
    fields: { required: readonly (keyof T)[]; optional: readonly (keyof T)[] },
    params: Record<string, unknown>,
    scope: RequestScope,
  ): Record<string, unknown>;
  /**
   * Runs a handler with a CallContext; in the modern era also the input-required rounds.
   * Returns the handler's value, or an input-required result. What the protocol must answer
   * itself (authentication, a missing capability, a resource that is not there) is thrown as
   * an RpcError; the handler's own failures are rethrown as they are.
   */
  withContext<T>(
    params: Record<string, unknown>,
    scope: RequestScope,
    target: { method: string; name: string; args: unknown; resourceUri?: string },
    body: (ctx: CallContext) => Promise<T>,
    /** How the handler asks the client for input, when not the era's way (a task's). */
    requestInput?: CallContext['requestInput'],
  ): Promise<{ value: T } | { inputRequired: Record<string, unknown> }>;
}

export function createShared(options: FeatureOptions): Shared {
  const { signer } = options;
  const ttlMs = options.listTtlMs ?? 60_000;
  // Whether a list snapshot holds any per-caller item; the registry's snapshots are rebuilt
  // only when a list changes, so this is computed once per snapshot.
  const gatedLists = new WeakMap<readonly Gated[], { allows: boolean; scoped: boolean }>();

  const pageSize = options.pageSize ?? 100;
  const cacheHints = (
    scope: RequestScope,
    cacheScope: 'public' | 'private',
  ): Record<string, unknown> => (scope.era === 'modern' ? { ttlMs, cacheScope } : {});
  const visible = <T extends Gated>(
    items: readonly T[],
    principal: Principal,
  ): { items: readonly T[]; cacheScope: 'public' | 'private' } => {
    let gated = gatedLists.get(items);
    if (gated === undefined) {
      gated = {
        allows: items.some((item) => item.allows !== undefined),
        scoped: items.some((item) => item.inScope !== undefined),
      };
      gatedLists.set(items, gated);
    }
    const byAccess = options.filterByAccess === true && gated.allows;
    if (!byAccess && !gated.scoped) return { items, cacheScope: 'public' };
    const keep = byAccess ? canUse : inScope;
    return { items: items.filter((item) => keep(item, principal)), cacheScope: 'private' };
  };

  return {
    visible,
    cacheHints,

    listPage(kind, key, items, fields, params, scope) {
      const shown = visible(items, scope.channel.principal);
      const page = paginate(signer, kind, shown.items, params['cursor'], pageSize);
      const wire = page.items.map((item) => {
        const out: Record<string, unknown> = {};
        for (const field of fields.required) out[field as string] = item[field];
        for (const field of fields.optional) {
          if (item[field] !== undefined) out[field as string] = item[field];
        }
        return out;
      });
      return { [key]: wire, ...page.next, ...cacheHints(scope, shown.cacheScope) };
    },

    async withContext(params, scope, target, body, requestInput) {
      // A bad requestState is refused before anything is registered for this request.
      const round =
        scope.era === 'modern'
          ? openRound(signer, targetOf(target.method, target.name, target.args), params)
          : undefined;
      const controller = new AbortController();
      const outer = scope.channel.signal;
      const onOuterAbort = (): void => controller.abort(outer?.reason);
      if (outer?.aborted) controller.abort(outer.reason);
      outer?.addEventListener('abort', onOuterAbort, { once: true });
      const stop = options.stopCalls;
      const onStop = (): void => controller.abort(stop?.reason);
      if (stop?.aborted) controller.abort(stop.reason);
      stop?.addEventListener('abort', onStop, { once: true });
      scope.channel.inFlight?.set(scope.id, controller);
      const built = buildContext({
        channel: scope.channel,
        principal: scope.channel.principal,
        signal: controller.signal,
        progressToken: progressTokenOf(params),
        logLevel: scope.logLevel,
        clientCapabilities: scope.clientCapabilities,
        requestInput:
          requestInput && round
            ? answeredFirst(round, scope.clientCapabilities, requestInput)
            : (requestInput ??
              (round ? modernRequestInput(round, scope.clientCapabilities) : undefined)),
        ...(options.databases ? { database: databaseChoice(options.databases, scope) } : {}),
      });
      try {
        return { value: await body(built.ctx) };
      } catch (error) {
        if (error instanceof InputRequiredSignal && round) {
          return { inputRequired: inputRequiredResult(signer, round, error) };
        }
        throw protocolErrorOf(error, scope.era, target.resourceUri) ?? error;
      } finally {
        built.finish();
        scope.channel.inFlight?.delete(scope.id);
        outer?.removeEventListener('abort', onOuterAbort);
        stop?.removeEventListener('abort', onStop);
      }
    },
  };
}

function noSessionToKeep(name: string): AppError {
  return new AppError(
    ErrorCodes.TOOL_INPUT_INVALID,
    `Nothing selected: this request came without Mcp-Session-Id, so there is no session to remember the choice. Pass the database argument on each call ("database": "${name}"), or open a session: send initialize with an Accept header that admits text/event-stream, then Mcp-Session-Id.`,
    { category: 'input' },
  );
}

/**
 * The session's database choice: an MCP session keeps its own; without one (modern era) the
 * selection belongs to the caller (its token, user, or everyone when anonymous).
 */
function databaseChoice(
  directory: Pick<DatabaseDirectory, 'selectFor'>,
  scope: RequestScope,
): DatabaseChoice {
  const session = scope.channel.session;
  return {
    selected: session?.database ?? null,
    select(name) {
      // Stored on a session that ends with this request, the choice would be lost unsaid.
      if (session?.oneRequest) throw noSessionToKeep(name);
      if (session) session.database = name;
      else directory.selectFor(scope.channel.principal, name);
    },
    used(name) {
      if (scope.note) scope.note.database = name;
    },
  };
}
