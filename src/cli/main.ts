// pgmcp command line: the composition root and the only code that writes to stdout/stderr.
// Each command's code is imported when that command runs (cold start: a stdio server is
// spawned per session and must answer quickly; `--version` loads next to nothing).
import { Command, Option } from 'commander';
import type { tokenCreate, userCommand } from './auth-commands.js';
import {
  common,
  configFrom,
  defineServe,
  fail,
  logLevelOption,
  EMBED_MAX_BATCH_SIZE,
  wholeNumber,
  type CommonOptions,
} from './commands.js';
import type { ChatOptions } from './chat/index.js';
import type { ImportOptions } from './config-import.js';
import type { EmbedOptions } from './embed.js';
import type { InstallOptions } from './install.js';
import { checkRuntime } from './runtime.js';
import { DEFAULT_TOKEN_LIFETIME } from './token-lifetime.js';
import { VERSION } from './version.js';

// First of all, whatever the command: a warning on a Node on its way out, a refusal on one
// pgmcp does not run on (runtime.ts).
try {
  await checkRuntime();
} catch (error) {
  fail(error);
}

const authCommands = () => import('./auth-commands.js');

const program = new Command()
  .name('pgmcp')
  .description('A PostgreSQL server for the Model Context Protocol.')
  .version(VERSION, '-v, --version')
  // Usage errors (an unknown option, a value outside its choices, a missing option) exit 2,
  // like a bad configuration; help and --version exit 0. Subcommands inherit this.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2));

defineServe(program.command('serve').description('serve MCP over stdio or Streamable HTTP'));

common(
  program.command('doctor').description('check the database connection and how safe the role is'),
).action(async (options: CommonOptions) => {
  try {
    const { doctor } = await import('./doctor.js');
    process.exitCode = await doctor(await configFrom(options));
  } catch (error) {
    fail(error);
  }
});

common(
  program
    .command('install')
    .description('install or upgrade the SQL handler registry (schema mcp) in the database')
    .option('--names <list>', "also add another system's SQL interface over it: pgmi (schema api)")
    .option(
      '--grant-runtime <role>',
      'grant the role pgmcp serves as what it needs to read the registry and run handlers',
    ),
).action(async (options: CommonOptions & InstallOptions) => {
  try {
    const { install } = await import('./install.js');
    process.exitCode = await install(await configFrom(options), options);
  } catch (error) {
    fail(error);
  }
});

program
  .command('config')
  .description('work with configuration files')
  .command('import')
  .description(
    "convert a pgEdge postgres-mcp.yaml or an NpgsqlRest appsettings.json to pgmcp's YAML",
  )
  .argument('<file>', 'the file to convert')
  .requiredOption('--from <system>', 'what wrote the file: pgedge or npgsqlrest')
  .option('--out <file>', 'write the config here instead of standard output')
  .action(async (file: string, options: ImportOptions) => {
    try {
      const { configImport } = await import('./config-import.js');
      process.exitCode = configImport(file, options);
    } catch (error) {
      fail(error);
    }
  });

common(
  program
    .command('embed')
    .description(
      'fill or refresh the embeddings of a table (resumable; only missing or changed rows)',
    )
    .requiredOption('--table <name>', 'table to embed, optionally schema-qualified')
    .requiredOption('--text-column <column>', 'column holding the text to embed')
    .option(
      '--vector-column <column>',
      'vector column to fill (default <text-column>_embedding; created when missing)',
    )
    .option('--provider <name>', 'embedding provider (default: embeddings.provider)')
    .addOption(
      new Option(
        '--create-index <method>',
        'create an index on the vector column: hnsw or ivfflat',
      ).choices(['hnsw', 'ivfflat']),
    )
    .option(
      '--batch-size <n>',
      `texts per provider request (1 to ${EMBED_MAX_BATCH_SIZE})`,
      wholeNumber(1, EMBED_MAX_BATCH_SIZE),
    ),
).action(async (options: CommonOptions & EmbedOptions) => {
  try {
    const { embed } = await import('./embed.js');
    process.exitCode = await embed(await configFrom(options), options);
  } catch (error) {
    fail(error);
  }
});

// The terminal chat client; its modules (and the AI SDK's client) load only when it runs.
common(
  program
    .command('chat')
    .description('chat with your database in the terminal (local, or a remote pgmcp with --url)')
    .option('--url <url>', 'a running pgmcp to talk to (default: start one here, in-process)')
    .option('--token <token>', 'API token for --url (or set PGMCP_TOKEN)')
    .option('--user <name>', 'log in to --url as this user (the password is prompted for)')
    .option('--use <database>', 'which configured database to ask about')
    .option('--provider <name>', "LLM provider (default: the server's default)")
    .option('--model <name>', "model (default: the provider's default)")
    .option('--once <question>', 'ask one question, print the answer and exit')
    .option('--json', 'with --once: print the answer as JSON')
    .option('--yes', 'with --once: approve writes the model proposes (default: refuse them)'),
).action(async (options: ChatOptions) => {
  const { runChat } = await import('./chat/index.js');
  process.exitCode = await runChat(options);
});

// `token` and `user` read the same configuration as `serve` and so reach the same state
// database (state.url, else the embedded database in the data directory).
const stateOptions = (command: Command): Command =>
  command
    .option('--config <file>', 'YAML configuration file')
    .option(
      '--database <url>',
      'PostgreSQL URL, as for serve (the state database is state.url or the embedded one)',
    )
    .option('--data-dir <dir>', 'data directory of the embedded database')
    .addOption(logLevelOption('log level (default warn)'));

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

const token = program
  .command('token')
  .description('manage API tokens (kept hashed in the state database)');

stateOptions(
  token
    .command('create')
    .description('create an API token and print it once')
    .requiredOption('--name <name>', "the token's name: the caller identity it stands for")
    .option(
      '--expires <lifetime>',
      `90s, 30m, 12h, 30d or never (default ${DEFAULT_TOKEN_LIFETIME})`,
    )
    .option('--bind-database <name>', 'only this configured database may be used with it')
    .option('--role <role>', 'a role for @authorize checks (repeat, or a,b)', collect)
    .option('--pg-role <role>', 'PostgreSQL role its calls run as (SET LOCAL ROLE)')
    .option('--json', 'print the token and its record as JSON'),
).action(async (options: CommonOptions & Parameters<typeof tokenCreate>[2]) => {
  try {
    const { tokenCreate } = await authCommands();
    await tokenCreate(await configFrom(options), options.logLevel, options);
  } catch (error) {
    fail(error);
  }
});

stateOptions(
  token
    .command('list')
    .description('list tokens (never their secrets)')
    .option('--active', 'only tokens that are neither revoked nor expired')
    .option('--json', 'print JSON'),
).action(async (options: CommonOptions & { json?: boolean; active?: boolean }) => {
  try {
    const { tokenList } = await authCommands();
    await tokenList(await configFrom(options), options.logLevel, options);
  } catch (error) {
    fail(error);
  }
});

stateOptions(
  token
    .command('revoke')
    .description('revoke a token at once (other instances within auth.cacheTtlMs)')
    .argument('<id-or-prefix>', 'the id or the prefix shown by token list'),
).action(async (idOrPrefix: string, options: CommonOptions) => {
  try {
    const { tokenRevoke } = await authCommands();
    await tokenRevoke(await configFrom(options), options.logLevel, idOrPrefix);
  } catch (error) {
    fail(error);
  }
});

const oauth = program.command('oauth').description('the built-in OAuth authorization server');
stateOptions(
  oauth
    .command('rotate-keys')
    .description('make a new token signing key; the old one stays published for a day'),
).action(async (options: CommonOptions) => {
  try {
    const { oauthRotateKeys } = await authCommands();
    await oauthRotateKeys(await configFrom(options), options.logLevel);
  } catch (error) {
    fail(error);
  }
});

const user = program.command('user').description('manage users who log in with a password');
const userAction = (
  action: Parameters<typeof userCommand>[2],
  description: string,
  extra: (command: Command) => Command = (c) => c,
): void => {
  const command = user.command(action).description(description);
  if (action !== 'list') command.argument('<name>', 'user name');
  stateOptions(extra(command)).action(async (...args: unknown[]) => {
    const name = action === 'list' ? undefined : (args[0] as string);
    const options = (action === 'list' ? args[0] : args[1]) as CommonOptions & {
      role?: string[];
      pgRole?: string;
      json?: boolean;
    };
    try {
      const { userCommand } = await authCommands();
      await userCommand(await configFrom(options), options.logLevel, action, name, options);
    } catch (error) {
      fail(error);
    }
  });
};
const withRoles = (command: Command): Command =>
  command
    .option('--role <role>', 'a role for @authorize checks (repeat, or a,b)', collect)
    .option('--pg-role <role>', 'PostgreSQL role their calls run as (none: the default)');
userAction('add', 'add a user; the password is prompted for (or read from stdin)', withRoles);
userAction('passwd', 'set a new password (prompted, or from stdin); ends their sessions');
userAction('remove', 'remove a user and their sessions');
userAction('enable', 'let a disabled user log in again');
userAction('disable', 'stop a user from logging in; ends their sessions');
userAction('update', "replace a user's roles or PostgreSQL role", withRoles);
userAction('list', 'list users', (c) => c.option('--json', 'print JSON'));

await program.parseAsync(process.argv);
