// Debian's Prometheus (`/usr/bin/prometheus`, installed by .ci/run) for the metrics suites: a
// throwaway server on a free loopback port, with its own configuration and data directory,
// scraping the targets a test gives it every second; stopped and removed after the file. Without
// the binary the suite is skipped LOUDLY and recorded in .tmp/skipped-suites.txt (CI fails).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportSkipped } from './postgres.js';
import { freePort } from './free-port.js';
export { freePort };

export const PROMETHEUS_BIN = '/usr/bin/prometheus';
export const PROMTOOL_BIN = '/usr/bin/promtool';

export function prometheusInstalled(suite: string): boolean {
  if (existsSync(PROMETHEUS_BIN) && existsSync(PROMTOOL_BIN)) return true;
  reportSkipped(suite, 'no Prometheus: apt-get install prometheus (.ci/run does)');
  return false;
}

export interface ScrapeTarget {
  /** host:port */
  address: string;
  /** A bearer token to scrape with (metrics on the main port). */
  bearer?: string;
}

export interface Prometheus {
  readonly url: string;
  /** An instant query's result vector. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** Polls `expr` until its result is not empty (each scrape is a second apart). */
  waitFor(
    expr: string,
    timeoutMs?: number,
  ): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** GET /api/v1/<path>'s data. */
  api(path: string): Promise<any>;
  stop(): Promise<void>;
}

export async function startPrometheus(options: {
  targets: ScrapeTarget[];
  ruleFiles?: string[];
}): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-prometheus-'));
  const jobs = options.targets.map((target, i) => ({
    ...target,
    job: i === 0 ? 'pgmcp' : `pgmcp_${i}`,
  }));
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    ...(options.ruleFiles?.length
      ? ['rule_files:', ...options.ruleFiles.map((file) => `  - ${JSON.stringify(file)}`)]
      : []),
    'scrape_configs:',
    ...jobs.flatMap((job) => [
      `  - job_name: ${job.job}`,
      ...(job.bearer
        ? ['    authorization:', `      credentials: ${JSON.stringify(job.bearer)}`]
        : []),
      '    static_configs:',
      `      - targets: [${JSON.stringify(job.address)}]`,
    ]),
  ].join('\n');
  writeFileSync(join(dir, 'prometheus.yml'), `${config}\n`);
  const port = await freePort();
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const api = async (path: string): Promise<any> => {
    const response = await fetch(`${url}/api/v1/${path}`);
    const body = (await response.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  const query = async (expr: string) =>
    (await api(`query?query=${encodeURIComponent(expr)}`)).result as {
      metric: Record<string, string>;
      value: [number, string];
    }[];
  // Ready once it answers /-/ready.
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/-/ready`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ready) break;
    if (i > 300 || child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus did not start:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    api,
    query,
    async waitFor(expr, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const result = await query(expr);
        if (result.length > 0) return result;
        if (Date.now() > deadline) {
          throw new Error(`prometheus: no result for ${expr} after ${timeoutMs} ms\n${stderr}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    stop,
  };
}
