// The orchestrator's probes. /live answers whenever the process can answer and touches no
// database: a PostgreSQL outage must not get pgmcp restarted. /ready answers 200 only when
// everything a request needs answers (the default database, the state database, Redis when
// rate limits count there) and the instance is neither starting nor draining; otherwise 503
// with the reason, so a load balancer sends its requests elsewhere. /health stays as it was.
import type { FastifyInstance } from 'fastify';
import { sendJson } from './replies.js';

export type CheckState = 'up' | 'down';

export interface Readiness {
  /** null when ready; else why not: starting, draining, or the parts that do not answer. */
  reason: 'starting' | 'draining' | 'unavailable' | null;
  checks: Record<string, CheckState>;
}

export interface ProbeOptions {
  readiness(): Promise<Readiness>;
  /** Redis's connection state when the rate limits count there; null without Redis. */
  redisUp: (() => boolean) | null;
}

/** What /ready would answer, for the ready gauge too. */
export async function readinessOf(options: ProbeOptions): Promise<Readiness> {
  const base = await options
    .readiness()
    .catch((): Readiness => ({ reason: 'unavailable', checks: {} }));
  if (options.redisUp === null) return base;
  const redis: CheckState = options.redisUp() ? 'up' : 'down';
  const checks = { ...base.checks, redis };
  return { reason: base.reason ?? (redis === 'down' ? 'unavailable' : null), checks };
}

export function registerProbes(app: FastifyInstance, options: ProbeOptions): void {
  app.get('/live', async (_req, reply) => {
    void reply.header('cache-control', 'no-store');
    return sendJson(reply, 200, { status: 'live' });
  });
  app.get('/ready', async (_req, reply) => {
    const { reason, checks } = await readinessOf(options);
    void reply.header('cache-control', 'no-store');
    if (reason === null) return sendJson(reply, 200, { status: 'ready', checks });
    return sendJson(reply, 503, { status: 'not ready', reason, checks });
  });
}
