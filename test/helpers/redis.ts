// A real Redis for the rate-limit suites, in order of preference: PGMCP_TEST_REDIS_URL;
// redis://127.0.0.1:6379 when it answers (the team's machines); a throwaway redis-server on a
// free port when the binary is installed, stopped at exit; else the suite is skipped LOUDLY
// and recorded in .tmp/skipped-suites.txt (CI fails).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { reportSkipped } from './postgres.js';
import { freePort } from './free-port.js';

const DEFAULT_URL = 'redis://127.0.0.1:6379';

let cached: Promise<string | null> | undefined;
let throwaway: ChildProcess | undefined;

/** The URL of a Redis for `suite`, or null after a loud skip notice. */
export function realRedis(suite: string): Promise<string | null> {
  cached ??= locate();
  afterAll(() => {
    throwaway?.kill('SIGTERM');
  });
  return cached.then((url) => {
    if (url === null) {
      reportSkipped(
        suite,
        'no Redis: set PGMCP_TEST_REDIS_URL, start one on 127.0.0.1:6379, or install redis-server',
      );
    }
    return url;
  });
}

/** A key prefix no other test (or run) uses, so suites running side by side do not collide. */
export function uniquePrefix(label: string): string {
  return `pgmcp-test:${label}:${randomBytes(6).toString('hex')}:`;
}

/** Deletes the keys under `prefix` a suite left (sessions, their holders and events). */
export async function dropKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  try {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
  } finally {
    client.disconnect();
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function locate(): Promise<string | null> {
  const fromEnv = process.env['PGMCP_TEST_REDIS_URL'];
  if (fromEnv) return fromEnv;
  if (await answers(DEFAULT_URL)) return DEFAULT_URL;
  if (spawnSync('redis-server', ['--version']).status !== 0) return null;
  const port = await freePort();
  throwaway = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  // Readiness is polled by connecting, a bounded number of times; no fixed sleeps.
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await answers(url)) return url;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return null;
}
