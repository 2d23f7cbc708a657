// The conformance fixture server: `pgmcp serve`, with the same options, plus the tools,
// resources and prompts the official MCP conformance suites call (./fixtures). Test-only:
// nothing here ships in dist/. `npm run conformance:serve -- --http 127.0.0.1:PORT` compiles
// it (scripts/conformance-build.sh) and runs it. The fixtures come in the way pgmcp's own
// features do (ServeComposition, src/cli/serve.ts): into the open app's registry, and through
// the dispatcher the transport is given, which keeps each request's extras beside it.
import { Command } from 'commander';
import { defineServe } from '../../src/cli/commands.js';
import { registerConformanceFixtures } from './fixtures/index.js';
import { withFixtureExtras } from './fixtures/support.js';

const command = new Command()
  .name('conformance:serve')
  .description('pgmcp serve plus the MCP conformance fixtures (tests only)');
defineServe(command, {
  attach: (app) => registerConformanceFixtures(app.registry),
  dispatcher: withFixtureExtras,
});
await command.parseAsync(process.argv);
