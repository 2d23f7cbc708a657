// Debian's HAProxy in front of several pgmcp instances, with the configuration docs/deploy.md
// gives (examples/deploy/haproxy.cfg) in a temporary directory: its ports changed, and one
// header added to each answer (x-served-by: the instance's name) so a test sees the rotation.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './postgres.js';
import { runBalancer, type Balancer } from './cluster.js';
import { freePort } from './free-port.js';

export type { Balancer } from './cluster.js';

export const HAPROXY_BIN = '/usr/sbin/haproxy';
export const HAPROXY_CONFIG = join(REPO_ROOT, 'examples', 'deploy', 'haproxy.cfg');

export function haproxyInstalled(): boolean {
  return existsSync(HAPROXY_BIN);
}

/** The documented configuration, bound to a free port and pointed at `backends` (host:port). */
export function balancerConfig(port: number, backends: string[]): string {
  const documented = readFileSync(HAPROXY_CONFIG, 'utf8');
  const servers = [
    '  http-response set-header x-served-by %[srv_name]',
    ...backends.map((b, i) => `  server pgmcp${i + 1} ${b}`),
  ].join('\n');
  const config = documented
    .replace(/^ {2}bind 127\.0\.0\.1:8000$/m, `  bind 127.0.0.1:${port}`)
    .replace(/(^ {2}server pgmcp\d+ .+\n?)+/m, `${servers}\n`);
  if (!config.includes(`bind 127.0.0.1:${port}`) || !config.includes(servers)) {
    throw new Error(`${HAPROXY_CONFIG} no longer has the bind and server lines this test rewrites`);
  }
  return config;
}

/** Starts HAProxy over `backends`; resolves once /health answers 200 through it. */
export async function startBalancer(backends: string[]): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-haproxy-'));
  const port = await freePort();
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, balancerConfig(port, backends));
  // -db: stay in the foreground, no daemon.
  return runBalancer('HAProxy', HAPROXY_BIN, ['-db', '-f', file], dir, port);
}
