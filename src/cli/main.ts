// pgmcp command line: the composition root and the only code that writes to stdout/stderr.
import { Command } from 'commander';
import { common, configFrom, defineServe, fail, type CommonOptions } from './commands.js';
import { doctor } from './doctor.js';
import { install } from './install.js';
import { VERSION } from './version.js';

const program = new Command()
  .name('pgmcp')
  .description('A PostgreSQL server for the Model Context Protocol.')
  .version(VERSION, '-v, --version');

defineServe(program.command('serve').description('serve MCP over stdio or Streamable HTTP'));

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
