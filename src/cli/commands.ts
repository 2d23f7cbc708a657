// The options and actions of pgmcp's commands. main.ts assembles them into the program; a
// composition of `serve` (see ServeComposition in serve.ts) reuses `serve`'s.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { answerOf } from '../core/error-table.js';
import { isAppError } from '../core/errors.js';
import type { Config, ConfigFlags } from '../config/index.js';
import { LOG_LEVELS } from '../config/levels.js';
import type { ServeComposition } from './serve.js';

export interface CommonOptions extends ConfigFlags {
  printConfig?: boolean;
}

/**
 * The configuration of a command's options, the environment and the file they name. The
 * schema (and zod) loads here, when a command runs: `pgmcp --version` never needs it.
 */
export async function configFrom(options: CommonOptions): Promise<Config> {
  const { loadConfig } = await import('../config/load.js');
  const flags: ConfigFlags = {
    config: options.config,
    stdio: options.stdio,
    http: options.http,
    database: options.database,
    dataDir: options.dataDir,
    allowWrites: options.allowWrites,
    logLevel: options.logLevel,
    requireAuth: options.requireAuth,
    auth: options.auth,
    tlsCert: options.tlsCert,
    tlsKey: options.tlsKey,
  };
  return loadConfig({ flags, env: process.env, cwd: process.cwd() });
}

export function fail(error: unknown): never {
  if (isAppError(error)) {
    process.stderr.write(`pgmcp: ${error.message}\n`);
    // The error table's exit column: 2 what was asked cannot be done as given (a bad value, a
    // bad configuration), as for command-line usage errors; 1 it failed.
    process.exit(answerOf(error).exit);
  }
  process.stderr.write(`pgmcp: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(1);
}

/** --log-level, with the levels pino knows. */
export const logLevelOption = (description = 'log level'): Option =>
  new Option('--log-level <level>', description).choices(LOG_LEVELS);

/** The largest `pgmcp embed --batch-size`: the largest batch any provider may be configured with. */
export const EMBED_MAX_BATCH_SIZE = 10_000;

/**
 * A parser for an option that takes a whole number from `min` to `max`: anything else (0, -5,
 * 1.5, 12abc) is a usage error, which exits 2 with commander's one-line message.
 */
export const wholeNumber =
  (min: number, max: number) =>
  (value: string): number => {
    const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    }
    return n;
  };

/** The options every command takes. */
export const common = (command: Command): Command =>
  command
    .option('--config <file>', 'YAML configuration file')
    .option('--database <url>', 'PostgreSQL URL (default: the embedded database)')
    .option('--data-dir <dir>', 'data directory of the embedded database')
    .option('--allow-writes', 'allow statements that write (default: read-only)')
    .addOption(logLevelOption());

/** `serve`'s options and action on `command`, serving `composition`'s parts beside pgmcp's own. */
export function defineServe(command: Command, composition: ServeComposition = {}): Command {
  return common(
    command
      .option('--stdio', 'serve on stdin/stdout (for desktop MCP clients)')
      .option('--http [hostport]', 'serve Streamable HTTP on [HOST:]PORT (default 127.0.0.1:8080)')
      .option('--tls-cert <file>', 'serve HTTPS with this PEM certificate (needs --tls-key)')
      .option('--tls-key <file>', 'private key (PEM) of the --tls-cert certificate')
      .option('--require-auth', 'require a bearer token even on a loopback address')
      .option('--no-auth', 'serve without authentication, even beyond loopback (warned)')
      .option('--print-config', 'print the effective configuration (secrets redacted) and exit'),
  ).action(async (options: Omit<CommonOptions, 'http'> & { http?: string | boolean }) => {
    try {
      const http = options.http === true ? '127.0.0.1:8080' : options.http || undefined;
      const config = await configFrom({ ...options, http });
      // Loaded when the command runs: `pgmcp --version` and the other commands never need it.
      const { printConfig, serve } = await import('./serve.js');
      if (options.printConfig) return printConfig(config);
      await serve(config, composition, () => configFrom({ ...options, http }));
    } catch (error) {
      fail(error);
    }
  });
}
