// pgmcp command line: the composition root and the only code that writes to stdout/stderr.
import { Command, Option } from 'commander';
import { isAppError } from '../core/errors.js';
import { loadConfig, type Config, type ConfigFlags } from '../config/index.js';
import { doctor } from './doctor.js';
import { install } from './install.js';
import { printConfig, serve } from './serve.js';
import { VERSION } from './version.js';

interface CommonOptions extends ConfigFlags {
  printConfig?: boolean;
}

function configFrom(options: CommonOptions): Config {
  const flags: ConfigFlags = {
    config: options.config,
    stdio: options.stdio,
    http: options.http,
    database: options.database,
    dataDir: options.dataDir,
    allowWrites: options.allowWrites,
    logLevel: options.logLevel,
    conformance: options.conformance,
    tlsCert: options.tlsCert,
    tlsKey: options.tlsKey,
  };
  return loadConfig({ flags, env: process.env, cwd: process.cwd() });
}

function fail(error: unknown): never {
  if (isAppError(error) && (error.category === 'config' || error.category === 'unavailable')) {
    process.stderr.write(`pgmcp: ${error.message}\n`);
    process.exit(error.category === 'config' ? 2 : 1);
  }
  process.stderr.write(`pgmcp: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(1);
}

const program = new Command()
  .name('pgmcp')
  .description('A PostgreSQL server for the Model Context Protocol.')
  .version(VERSION, '-v, --version');

const common = (command: Command): Command =>
  command
    .option('--config <file>', 'YAML configuration file')
    .option('--database <url>', 'PostgreSQL URL (default: the embedded database)')
    .option('--data-dir <dir>', 'data directory of the embedded database')
    .option('--allow-writes', 'allow statements that write (default: read-only)')
    .addOption(
      new Option('--log-level <level>', 'log level').choices([
        'trace',
        'debug',
        'info',
        'warn',
        'error',
        'fatal',
        'silent',
      ]),
    );

common(
  program
    .command('serve')
    .description('serve MCP over stdio or Streamable HTTP')
    .option('--stdio', 'serve on stdin/stdout (for desktop MCP clients)')
    .option('--http [hostport]', 'serve Streamable HTTP on [HOST:]PORT (default 127.0.0.1:8080)')
    .option('--conformance', 'add the fixtures the MCP conformance suite calls')
    .option('--tls-cert <file>', 'serve HTTPS with this PEM certificate (needs --tls-key)')
    .option('--tls-key <file>', 'private key (PEM) of the --tls-cert certificate')
    .option('--print-config', 'print the effective configuration (secrets redacted) and exit'),
).action(async (options: Omit<CommonOptions, 'http'> & { http?: string | boolean }) => {
  try {
    const http = options.http === true ? '127.0.0.1:8080' : options.http || undefined;
    const config = configFrom({ ...options, http });
    if (options.printConfig) return printConfig(config);
    await serve(config);
  } catch (error) {
    fail(error);
  }
});

common(
  program.command('doctor').description('check the database connection and how safe the role is'),
).action(async (options: CommonOptions) => {
  try {
    process.exitCode = await doctor(configFrom(options));
  } catch (error) {
    fail(error);
  }
});

common(
  program
    .command('install')
    .description('install or upgrade the SQL handler registry (schema mcp) in the database'),
).action(async (options: CommonOptions) => {
  try {
    process.exitCode = await install(configFrom(options));
  } catch (error) {
    fail(error);
  }
});

await program.parseAsync(process.argv);
