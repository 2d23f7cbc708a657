// The conformance fixture server: `pgmcp serve`, with the same options, plus the tools,
// resources and prompts the official MCP conformance suites call (./fixtures). Test-only:
// nothing here ships in dist/. `npm run conformance:serve -- --http 127.0.0.1:PORT` compiles
// it (scripts/conformance-serve.sh) and runs it.
import { Command } from 'commander';
import { defineServe } from '../../src/cli/commands.js';
import { registerConformanceFixtures } from './fixtures/index.js';
import { withFixtureExtras } from './fixtures/support.js';

const command = new Command()
  .name('conformance:serve')
  .description('pgmcp serve plus the MCP conformance fixtures (tests only)');
defineServe(command, { register: registerConformanceFixtures, extendContext: withFixtureExtras });
await command.parseAsync(process.argv);
