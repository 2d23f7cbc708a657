// Debian's nginx in front of several pgmcp instances, with the configuration docs/deploy.md
// gives (examples/deploy/nginx.conf, the part that goes in the http {} block) as written but for
// its ports, and one header added to each answer (x-served-by: the instance's address) so a test
// sees the rotation. nginx runs in the foreground with its own prefix, pid file and temporary
// paths in a temporary directory, its errors on stderr; as nobody when the test runs as root.
import { chownSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './postgres.js';
import { runBalancer, type Balancer } from './cluster.js';
import { freePort } from './free-port.js';

export const NGINX_BIN = '/usr/sbin/nginx';
export const NGINX_CONFIG = join(REPO_ROOT, 'examples', 'deploy', 'nginx.conf');
const NOBODY = 65534;

export function nginxInstalled(): boolean {
  return existsSync(NGINX_BIN);
}

/** The documented server configuration, listening on a free port, over `backends` (host:port). */
export function nginxServerConfig(port: number, backends: string[]): string {
  const documented = readFileSync(NGINX_CONFIG, 'utf8');
  const listen = `    listen 127.0.0.1:${port};`;
  let servers = '';
  const config = documented
    .replace(/^ {4}listen 8000;$/m, listen)
    .replace(/(^ {4}server 127\.0\.0\.1:808\d( [^;\n]*)?;\n)+/m, (_all, _line, options = '') => {
      servers = backends.map((b) => `    server ${b}${options as string};\n`).join('');
      return servers;
    })
    .replace(
      /^( {8}proxy_pass http:\/\/pgmcp;)$/m,
      '$1\n        add_header x-served-by $upstream_addr always;',
    );
  if (!config.includes(listen) || servers === '' || !config.includes('x-served-by')) {
    throw new Error(
      `${NGINX_CONFIG} no longer has the listen, server and proxy_pass lines this test rewrites`,
    );
  }
  return config;
}

/** Starts nginx over `backends`; resolves once /health answers 200 through it. */
export async function startNginx(backends: string[]): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-nginx-'));
  const port = await freePort();
  const file = join(dir, 'nginx.conf');
  // The main context a packaged nginx.conf would give; the documented part goes in http {}.
  const main = [
    'daemon off;',
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    'error_log stderr notice;',
    'events { worker_connections 512; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
      (kind) => `  ${kind}_temp_path ${dir}/${kind}_temp;`,
    ),
    nginxServerConfig(port, backends),
    '}',
    '',
  ].join('\n');
  writeFileSync(file, main);
  const root = process.getuid?.() === 0;
  // As root, nginx would switch its workers to a user of its own choosing; run it as nobody.
  if (root) chownSync(dir, NOBODY, NOBODY);
  // -e: errors go to stderr from the start, not to the packaged log file.
  return runBalancer('nginx', NGINX_BIN, ['-p', dir, '-c', file, '-e', 'stderr'], dir, port, {
    ...(root ? { uid: NOBODY, gid: NOBODY } : {}),
  });
}
