// What every MCP method handler shares: the request's scope, per-caller visibility of list
// items, cache hints, and running a handler with a CallContext (and, in the modern era,
// its input-required rounds).
import type { Principal } from '../../core/principal.js';
import type { CallContext, LogLevel } from '../../core/specs.js';
import type { Signer } from '../../core/signed.js';
import type { Registry } from '../../tools/registry.js';
import { buildContext, progressTokenOf } from '../call-context.js';
import type { RequestChannel } from '../channel.js';
import { authRequired, protocolErrorOf } from '../errors.js';
import {
  InputRequiredSignal,
  inputRequiredResult,
  modernRequestInput,
  openRound,
  targetOf,
} from '../input-required.js';
import { RpcCodes, RpcError, type JsonRpcId } from '../jsonrpc.js';

export interface FeatureOptions {
  registry: Registry;
  serverInfo: { name: string; version: string; title?: string; description?: string };
  instructions?: string | null;
  toolDescriptionSuffix?: string | null;
  signer: Signer;
  pageSize?: number;
  /** ttlMs hint on modern-era lists and reads. */
  listTtlMs?: number;
}

export interface RequestScope {
  era: 'legacy' | 'modern';
  id: JsonRpcId;
  channel: RequestChannel;
  clientCapabilities: Record<string, unknown>;
  logLevel: LogLevel | null;
  protocolVersion: string;
  /** Filled in for the exchange log: the code behind a tool error (SQLSTATE or PGMCP code). */
  note?: { errorCode?: string | number } | undefined;
}

export type Handler = (
  params: Record<string, unknown>,
  scope: RequestScope,
) => Promise<Record<string, unknown>>;

/** Anything a list holds: it may be shown to some callers only. */
export interface Gated {
  visibleTo?(principal: Principal): boolean;
}

export const canSee = (item: Gated, principal: Principal): boolean =>
  item.visibleTo === undefined || item.visibleTo(principal);

/**
 * A hidden item called by name. A caller without an identity is told to authenticate (-32001,
 * as for a requiresAuth handler or an @authorize routine it can see); signing in may reveal it.
 * An identified caller who still may not see it gets the unknown-name answer: nothing it can
 * do would change that, so the name's existence is not confirmed.
 */
export function hiddenError(
  kind: string,
  name: string,
  principal: Principal,
  unknown: RpcError,
): RpcError {
  if (principal.kind !== 'anonymous' && principal.userId !== null) return unknown;
  return authRequired(
    `Authentication required: the ${kind} ${name} needs an authenticated caller.`,
  );
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
  ): Promise<{ value: T } | { inputRequired: Record<string, unknown> }>;
}

export function createShared(options: FeatureOptions): Shared {
  const { signer } = options;
  const ttlMs = options.listTtlMs ?? 60_000;
  // Whether a list snapshot holds any per-caller item; the registry's snapshots are rebuilt
  // only when a list changes, so this is computed once per snapshot.
  const gatedLists = new WeakMap<readonly Gated[], boolean>();

  return {
    visible(items, principal) {
      let gated = gatedLists.get(items);
      if (gated === undefined) {
        gated = items.some((item) => item.visibleTo !== undefined);
        gatedLists.set(items, gated);
      }
      if (!gated) return { items, cacheScope: 'public' };
      return { items: items.filter((item) => canSee(item, principal)), cacheScope: 'private' };
    },

    cacheHints: (scope, cacheScope) => (scope.era === 'modern' ? { ttlMs, cacheScope } : {}),

    async withContext(params, scope, target, body) {
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
      scope.channel.inFlight?.set(scope.id, controller);
      const built = buildContext({
        channel: scope.channel,
        principal: scope.channel.principal,
        signal: controller.signal,
        progressToken: progressTokenOf(params),
        logLevel: scope.logLevel,
        clientCapabilities: scope.clientCapabilities,
        requestInput: round ? modernRequestInput(round, scope.clientCapabilities) : undefined,
        round: round?.round,
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
      }
    },
  };
}
