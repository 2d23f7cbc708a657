// Several pgmcp instances on one state database and one server.stateSecret, as the
// several-instances, cluster.redis, nonce and nginx suites start them: all of them or none (the
// ones that started are stopped when another fails), and optionally a load balancer in front
// (HAProxy, test/helpers/haproxy.ts, or nginx, test/helpers/nginx.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RealPostgres } from './postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from './server.js';

/** A load balancer the test started: its origin and how to stop it. */
export interface Balancer {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts a balancer over `backends` (host:port each), ready to serve. */
export type StartBalancer = (backends: string[]) => Promise<Balancer>;

/**
 * Runs a balancer in the foreground (the test owns the process; `dir` is removed when it stops)
 * and resolves once /health answers 200 through it on `port`.
 */
export async function runBalancer(
  name: string,
  command: string,
  args: string[],
  dir: string,
  port: number,
  as: { uid?: number; gid?: number } = {},
): Promise<Balancer> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...as });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const origin = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  for (let attempt = 0; attempt < 150; attempt++) {
    if (child.exitCode !== null) break;
    const ok = await fetch(`${origin}/health`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return { origin, stderr: () => stderr, stop };
    await sleep(100);
  }
  await stop();
  throw new Error(`${name} did not start serving:\n${stderr}`);
}

/** `count` servers with the same arguments and environment, started side by side. */
export async function startInstances(
  count: number,
  args: string[],
  options: { env: Record<string, string>; fixtures?: boolean },
): Promise<HttpServer[]> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => startHttpServer(args, options)),
  );
  const instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(instances.map((i) => i.stop()));
    throw failed.reason;
  }
  return instances;
}

export interface Cluster {
  instances: HttpServer[];
  balancer: Balancer;
  /** The MCP endpoint through the balancer. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Three instances of the fixture server on one state database, and a balancer over them.
 * `env` adds to what they share (cluster.redis, for one).
 */
export async function startCluster(
  info: RealPostgres,
  stateUrl: string,
  balance: StartBalancer,
  env: Record<string, string> = {},
): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-scale-'));
  const config = join(dir, 'pgmcp.yaml');
  // Loopback is the trusted proxy here: X-User-Id names the caller, so two callers can be told
  // apart without tokens (requests without the header, the SDK's, stay anonymous).
  writeFileSync(config, 'auth:\n  trustedProxies: ["127.0.0.1"]\n');
  const shared = serverEnv({
    // The scenarios' time zone (as in scenarios-postgres.test.ts).
    TZ: 'Asia/Tokyo',
    PGMCP_LOG_LEVEL: 'info',
    PGMCP_STATE_URL: stateUrl,
    PGMCP_STATE_SECRET: 'several-instances-share-this-secret',
    ...env,
  });
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  const instances = await startInstances(3, ['--database', info.url, '--config', config], {
    env: shared,
    fixtures: true,
  }).catch((error: unknown) => {
    removeDir();
    throw error;
  });
  const stopAll = async (): Promise<void> => {
    await Promise.all(instances.map((i) => i.stop()));
    removeDir();
  };
  const balancer = await balance(instances.map((i) => new URL(i.url).host)).catch(
    async (error: unknown) => {
      await stopAll();
      throw error;
    },
  );
  return {
    instances,
    balancer,
    url: `${balancer.origin}/mcp`,
    async stop() {
      await balancer.stop();
      await stopAll();
    },
  };
}
