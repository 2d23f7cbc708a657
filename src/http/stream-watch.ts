// Streams outlive the request that authenticated them: a GET SSE stream or a
// subscriptions/listen may stay open for hours after its token was revoked. So every open stream
// is watched with the credential it was opened with, and while any is open they are re-checked
// together every auth.cacheTtlMs: pgmcp's own bearers (API tokens, login sessions) in ONE query
// to the state database — a revocation by the CLI or another instance, a disabled user or an
// ended session is seen by every instance — and OAuth access tokens against their own `exp`.
// An opaque OAuth token, vouched for by introspection, is also asked about again at the
// introspection endpoint, at most every max(auth.cacheTtlMs, introspection.cacheSeconds) and a
// few at a time, so one the authorization server revoked (or that has no `exp` at all) does
// not keep its streams open. The streams of a credential that lapsed are closed (their owner
// decides how: a final error on a subscriptions/listen, the end of the response elsewhere) and
// the closing is logged once. While the state database or the introspection endpoint is out of
// reach, streams stay open and that is logged once. No stream open, no timer and no query.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import '../api/fastify-types.js';
import { bearerFromHeader, bearerKind, hashBearer, type LapseReason } from '../auth/index.js';
import type { TokenIntrospection } from '../auth/oauth/resource-server.js';
import type { Principal } from '../core/principal.js';

export type { LapseReason };

/** The batched re-check of pgmcp's own bearers (the authenticator). */
export interface BearerRecheck {
  lapsedBearers(hashes: readonly string[]): Promise<Map<string, LapseReason>>;
}

export interface StreamCredential {
  /** The bearer's hash: the streams of one credential are closed together. */
  readonly key: string;
  /** pgmcp's own bearer (API token or login session): re-checked in the state database. */
  readonly stateChecked: boolean;
  /** When it lapses by itself (epoch ms: an OAuth token's exp plus the clock skew); null: never. */
  readonly expiresAt: number | null;
  /** An opaque OAuth token: asks the introspection endpoint about it again (the raw token stays in this closure). */
  readonly reintrospect?: (() => Promise<'active' | LapseReason>) | null;
  readonly principal: Principal;
}

export interface StreamWatch {
  /** What a request's stream is watched for; null when nothing can lapse (anonymous, proxy). */
  credentialOf(req: FastifyRequest): StreamCredential | null;
  /** Watch one open stream; `onLapse` runs once if its credential lapses. Returns the unwatch. */
  watch(credential: StreamCredential, onLapse: (reason: LapseReason) => void): () => void;
  /** Streams watched now. */
  readonly size: number;
  close(): void;
}

export interface StreamWatchOptions {
  /** How often open streams are re-checked (auth.cacheTtlMs; at least MIN_RECHECK_MS). */
  intervalMs: number;
  /** null: no state database, so no pgmcp bearer can be watched. */
  recheck: BearerRecheck | null;
  /** auth.oauth.clockSkewSeconds: an OAuth token is accepted until exp plus this. */
  oauthClockSkewSeconds: number;
  /** The resource server's introspection (auth.oauth.introspection); null: none configured. */
  introspection?: TokenIntrospection | null;
  logger: Logger;
}

/** With auth.cacheTtlMs 0 (no cache) open streams are still re-checked this often. */
export const MIN_RECHECK_MS = 250;

/** Introspection requests in flight at once when many opaque tokens are due together. */
export const MAX_PARALLEL_INTROSPECTIONS = 4;

interface Group {
  credential: StreamCredential;
  streams: Set<(reason: LapseReason) => void>;
  /** When its token is next asked about at the introspection endpoint (epoch ms). */
  introspectAt: number;
}

/** Runs `task` over `items`, at most `limit` at a time. */
async function inBatches<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export function createStreamWatch(options: StreamWatchOptions): StreamWatch {
  const { logger, recheck } = options;
  const intervalMs = Math.max(MIN_RECHECK_MS, options.intervalMs);
  const groups = new Map<string, Group>();
  let size = 0;
  let timer: NodeJS.Timeout | null = null;
  let checking = false;
  let failing = false;
  let introspecting = false;
  let introspectionFailing = false;
  // Asked no more often than the introspection answers are cached, nor than the rest is re-checked.
  const introspectEveryMs = Math.max(intervalMs, options.introspection?.cacheMs ?? 0);

  const stopIfIdle = (): void => {
    if (size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };

  const lapse = (key: string, reason: LapseReason): void => {
    const group = groups.get(key);
    if (!group) return;
    groups.delete(key);
    // Emptied first: a stream's own unwatch (its response closing) must not count it again.
    const streams = [...group.streams];
    group.streams.clear();
    size -= streams.length;
    const { principal } = group.credential;
    logger.info(
      {
        principal: principal.kind,
        user: principal.userId,
        ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
        reason,
        streams: streams.length,
      },
      'closed the open streams of a credential that is no longer valid',
    );
    for (const onLapse of streams) {
      try {
        onLapse(reason);
      } catch (error) {
        logger.warn({ err: error }, 'closing a stream failed');
      }
    }
    stopIfIdle();
  };

  /** pgmcp's own bearers, all in one query to the state database. */
  const recheckState = async (): Promise<void> => {
    if (checking || !recheck) return; // a slow state database: never two checks at once
    const hashes = [...groups].filter(([, g]) => g.credential.stateChecked).map(([key]) => key);
    if (hashes.length === 0) return;
    checking = true;
    try {
      for (const [key, reason] of await recheck.lapsedBearers(hashes)) lapse(key, reason);
      if (failing) logger.info('open streams are re-checked again');
      failing = false;
    } catch (error) {
      // Streams stay open while the state database is away; new requests fail meanwhile.
      if (!failing) {
        logger.warn(
          { err: { message: (error as Error).message } },
          'the credentials of open streams cannot be re-checked: the state database is out of reach',
        );
      }
      failing = true;
    } finally {
      checking = false;
    }
  };

  /** Opaque OAuth tokens that are due, at the introspection endpoint, a few at a time. */
  const recheckIntrospected = async (now: number): Promise<void> => {
    if (introspecting) return;
    const due: [string, Group][] = [];
    for (const [key, group] of groups) {
      if (group.credential.reintrospect && group.introspectAt <= now) {
        group.introspectAt = now + introspectEveryMs;
        due.push([key, group]);
      }
    }
    if (due.length === 0) return;
    introspecting = true;
    let problem: Error | null = null;
    try {
      await inBatches(due, MAX_PARALLEL_INTROSPECTIONS, async ([key, group]) => {
        try {
          const answer = await group.credential.reintrospect!();
          if (answer !== 'active' && groups.get(key) === group) lapse(key, answer);
        } catch (error) {
          problem = error as Error;
        }
      });
    } finally {
      introspecting = false;
    }
    if (problem === null) {
      if (introspectionFailing) logger.info('open streams are re-checked again');
      introspectionFailing = false;
      return;
    }
    // Streams stay open while the endpoint is away, as for the state database.
    if (!introspectionFailing) {
      logger.warn(
        { err: { message: (problem as Error).message } },
        'the credentials of open streams cannot be re-checked: the introspection endpoint is out of reach',
      );
    }
    introspectionFailing = true;
  };

  const tick = (): void => {
    const now = Date.now();
    for (const [key, { credential }] of groups) {
      if (credential.expiresAt !== null && credential.expiresAt <= now) lapse(key, 'expired');
    }
    void recheckState();
    void recheckIntrospected(now);
  };

  return {
    credentialOf(req) {
      const principal = req.principal;
      if (principal.kind !== 'token' && principal.kind !== 'user' && principal.kind !== 'oauth') {
        return null;
      }
      const raw = bearerFromHeader(req.headers.authorization);
      if (raw === null) return null;
      if (principal.kind === 'oauth') {
        const exp = principal.claims['exp'];
        const expiresAt =
          typeof exp === 'number' && Number.isFinite(exp)
            ? (exp + options.oauthClockSkewSeconds) * 1000
            : null;
        const introspection = options.introspection;
        // An opaque token is asked about again, whether or not it has an exp; a JWT lapses at it.
        const reintrospect = introspection?.introspects(raw)
          ? () => introspection.recheck(raw)
          : null;
        if (expiresAt === null && reintrospect === null) return null;
        return { key: hashBearer(raw), stateChecked: false, expiresAt, reintrospect, principal };
      }
      if (bearerKind(raw) === null || !recheck) return null;
      return { key: hashBearer(raw), stateChecked: true, expiresAt: null, principal };
    },

    watch(credential, onLapse) {
      let group = groups.get(credential.key);
      if (!group) {
        group = { credential, streams: new Set(), introspectAt: Date.now() + introspectEveryMs };
        groups.set(credential.key, group);
      }
      // One function per stream, even when a caller passes the same one twice.
      const entry = (reason: LapseReason): void => onLapse(reason);
      group.streams.add(entry);
      size++;
      if (!timer) {
        timer = setInterval(tick, intervalMs);
        timer.unref();
      }
      const owner = group;
      return () => {
        if (!owner.streams.delete(entry)) return;
        size--;
        if (owner.streams.size === 0 && groups.get(credential.key) === owner) {
          groups.delete(credential.key);
        }
        stopIfIdle();
      };
    },

    get size() {
      return size;
    },

    close() {
      groups.clear();
      size = 0;
      stopIfIdle();
    },
  };
}
