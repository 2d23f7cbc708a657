// `npm run fuzz -- [seconds] [seed]`: the fuzz suites (test/e2e/fuzz.test.ts, and fuzz-auth.test.ts
// with authentication required) for longer than the test suite's run (default 300 s each, shared
// between its properties), on the built server. A failure
// prints the counterexample and its seed; pass the seed back to replay it.
import { spawnSync } from 'node:child_process';

const [seconds = '300', seed] = process.argv.slice(2);
if (!/^\d+$/.test(seconds) || (seed !== undefined && !/^-?\d+$/.test(seed))) {
  console.error('usage: npm run fuzz -- [seconds] [seed]');
  process.exit(2);
}
const env = { ...process.env, PGMCP_FUZZ_SECONDS: seconds };
if (seed !== undefined) env.PGMCP_FUZZ_SEED = seed;
const run = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    'test/e2e/fuzz.test.ts',
    'test/e2e/fuzz-auth.test.ts',
    '--maxWorkers=1',
    `--testTimeout=${(Number(seconds) + 120) * 1000}`,
  ],
  { stdio: 'inherit', env },
);
process.exit(run.status ?? 1);
