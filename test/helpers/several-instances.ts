// Several pgmcp instances on one PostgreSQL state database and one server.stateSecret, behind
// Debian's HAProxy with the documented round-robin configuration (test/helpers/haproxy.ts):
// what test/e2e/several-instances.test.ts and test/e2e/lb-clients.test.ts start.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBalancer, type Balancer } from './haproxy.js';
import type { RealPostgres } from './postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from './server.js';

export interface Cluster {
  instances: HttpServer[];
  balancer: Balancer;
  /** The MCP endpoint through the balancer. */
  url: string;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** The conformance fixture server instead of `pgmcp serve` (same arguments). */
  fixtures?: boolean;
  /** pgmcp.yaml of every instance (none when absent). */
  configYaml?: string;
  /** PGMCP_* values beside the state database and the shared secret. */
  env?: Record<string, string>;
}

/** Three instances serving `info.url`, sharing `stateUrl`, and HAProxy over them. */
export async function startCluster(
  info: RealPostgres,
  stateUrl: string,
  options: ClusterOptions = {},
): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-scale-'));
  const args = ['--database', info.url];
  if (options.configYaml !== undefined) {
    const config = join(dir, 'pgmcp.yaml');
    writeFileSync(config, options.configYaml);
    args.push('--config', config);
  }
  const env = serverEnv({
    PGMCP_LOG_LEVEL: 'info',
    ...options.env,
    PGMCP_STATE_URL: stateUrl,
    PGMCP_STATE_SECRET: 'several-instances-share-this-secret',
  });
  const started = await Promise.allSettled(
    [1, 2, 3].map(() => startHttpServer(args, { env, fixtures: options.fixtures ?? false })),
  );
  const instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stopAll = async (): Promise<void> => {
    await Promise.all(instances.map((i) => i.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const balancer = await startBalancer(instances.map((i) => new URL(i.url).host)).catch(
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
