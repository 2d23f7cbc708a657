// Draining at shutdown: once `start()` is called, every new request but /health is refused with
// 503 and Retry-After (a load balancer or client tries another instance, or this one once it is
// back), the sessions' GET streams end with a retry hint, and the requests already in flight go
// on; `idle()` resolves when the last of them has been answered. `draining` is the state a
// readiness probe reads (/health answers 503 "draining" meanwhile).
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { HTTP_REFUSALS } from '../core/error-table.js';
import { refuse } from './refuse.js';
import type { SessionStore } from './sessions.js';

/** What clients are told to wait before trying again, in seconds (and the SSE retry, in ms). */
export const DRAIN_RETRY_AFTER_S = 5;

export interface Drain {
  readonly draining: boolean;
  /** Requests being answered now (long-lived GET streams not counted). */
  readonly inFlight: number;
  start(): void;
  /** Resolves once no request is in flight. */
  idle(): Promise<void>;
}

export function registerDrain(
  app: FastifyInstance,
  deps: { sessions: SessionStore; mcpPaths: readonly string[]; logger: Logger },
): Drain {
  let draining = false;
  const active = new Set<IncomingMessage>();
  const waiters = new Set<() => void>();
  const settle = (): void => {
    if (active.size > 0) return;
    for (const resolve of waiters) resolve();
    waiters.clear();
  };

  // A callback hook, not an async one: no promise and no microtask per request.
  app.addHook('onRequest', (req, reply, done) => {
    // The probes answer to the end: /live that the process still answers (an orchestrator must
    // not kill a draining server), /health and /ready that it is draining.
    const url = req.routeOptions.url;
    if (url === '/health' || url === '/live' || url === '/ready') return done();
    if (draining) {
      reply.header('retry-after', String(DRAIN_RETRY_AFTER_S));
      reply.header('connection', 'close');
      // Answered here: done() is not called, so nothing after this hook runs.
      refuse(
        req,
        reply,
        HTTP_REFUSALS.SHUTTING_DOWN,
        `The server is shutting down; try again in ${DRAIN_RETRY_AFTER_S} s.`,
      );
      return;
    }
    // A session's GET stream lasts as long as the session: it is ended, not waited for.
    const stream = req.method === 'GET' && deps.mcpPaths.includes(req.routeOptions.url ?? '');
    if (!stream) {
      active.add(req.raw);
      reply.raw.once('close', () => {
        active.delete(req.raw);
        settle();
      });
    }
    done();
  });

  return {
    get draining() {
      return draining;
    },
    get inFlight() {
      return active.size;
    },
    start() {
      if (draining) return;
      draining = true;
      deps.logger.info({ inFlight: active.size }, 'draining: new requests are refused');
      for (const session of deps.sessions.all()) {
        session.getStream.retry(DRAIN_RETRY_AFTER_S * 1000);
        session.getStream.end(false);
      }
    },
    idle() {
      if (active.size === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.add(resolve));
    },
  };
}
