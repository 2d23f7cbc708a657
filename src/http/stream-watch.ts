// Streams outlive the request that authenticated them: a GET SSE stream or a
// subscriptions/listen may stay open for hours after its token was revoked. So every open stream
// is watched with the credential it was opened with, and while any is open they are re-checked
// together every auth.cacheTtlMs: pgmcp's own bearers (API tokens, login sessions) in ONE query
// to the state database — a revocation by the CLI or another instance, a disabled user or an
// ended session is seen by every instance — and OAuth access tokens against their own `exp`.
// The streams of a credential that lapsed are closed (their owner decides how: a final error on
// a subscriptions/listen, the end of the response elsewhere) and the closing is logged once.
// No stream open, no timer and no query.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import '../api/fastify-types.js';
import { bearerFromHeader, bearerKind, hashBearer, type LapseReason } from '../auth/index.js';
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
  logger: Logger;
}

/** With auth.cacheTtlMs 0 (no cache) open streams are still re-checked this often. */
export const MIN_RECHECK_MS = 250;

interface Group {
  credential: StreamCredential;
  streams: Set<(reason: LapseReason) => void>;
}

export function createStreamWatch(options: StreamWatchOptions): StreamWatch {
  const { logger, recheck } = options;
  const intervalMs = Math.max(MIN_RECHECK_MS, options.intervalMs);
  const groups = new Map<string, Group>();
  let size = 0;
  let timer: NodeJS.Timeout | null = null;
  let checking = false;
  let failing = false;

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

  const tick = async (): Promise<void> => {
    if (checking) return; // a slow state database: never two checks at once
    const now = Date.now();
    const lapsed = new Map<string, LapseReason>();
    const hashes: string[] = [];
    for (const [key, { credential }] of groups) {
      if (credential.expiresAt !== null && credential.expiresAt <= now) lapsed.set(key, 'expired');
      else if (credential.stateChecked) hashes.push(key);
    }
    if (hashes.length > 0 && recheck) {
      checking = true;
      try {
        for (const [key, reason] of await recheck.lapsedBearers(hashes)) lapsed.set(key, reason);
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
    }
    for (const [key, reason] of lapsed) lapse(key, reason);
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
        if (typeof exp !== 'number' || !Number.isFinite(exp)) return null;
        return {
          key: hashBearer(raw),
          stateChecked: false,
          expiresAt: (exp + options.oauthClockSkewSeconds) * 1000,
          principal,
        };
      }
      if (bearerKind(raw) === null || !recheck) return null;
      return { key: hashBearer(raw), stateChecked: true, expiresAt: null, principal };
    },

    watch(credential, onLapse) {
      let group = groups.get(credential.key);
      if (!group) {
        group = { credential, streams: new Set() };
        groups.set(credential.key, group);
      }
      // One function per stream, even when a caller passes the same one twice.
      const entry = (reason: LapseReason): void => onLapse(reason);
      group.streams.add(entry);
      size++;
      if (!timer) {
        timer = setInterval(() => void tick(), intervalMs);
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
