// What /ready checks for `serve --http`: the instance's phase (starting until it serves,
// draining after SIGTERM) and whether the default database and the state database answer, each
// within a bound, so a probe never hangs on a database that does not answer. Redis is checked
// by the HTTP layer, which holds its connection.
import type { Database } from '../db/database.js';
import type { CheckState, Readiness } from '../http/probes.js';
import type { StateDb } from '../state/index.js';

export type Phase = 'starting' | 'serving' | 'draining';

/** How long one check may take before it counts as down. */
const CHECK_TIMEOUT_MS = 2_000;

async function answers(check: () => Promise<unknown>): Promise<CheckState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
  });
  try {
    const ok = await Promise.race([check().then((v) => v !== false), timeout]);
    return ok ? 'up' : 'down';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

export function appReadiness(
  db: Pick<Database, 'health'>,
  state: Pick<StateDb, 'query'>,
  phase: () => Phase,
): () => Promise<Readiness> {
  return async () => {
    const [database, stateDb] = await Promise.all([
      answers(async () => (await db.health()).ok),
      answers(() => state.query('SELECT 1')),
    ]);
    const checks = { database, state: stateDb };
    const now = phase();
    if (now !== 'serving') return { reason: now, checks };
    const down = database === 'down' || stateDb === 'down';
    return { reason: down ? 'unavailable' : null, checks };
  };
}
