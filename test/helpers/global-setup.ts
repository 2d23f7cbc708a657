// Once per test run (vitest's globalSetup): the run's name, which every test file's own
// database carries, and after the run the drop of those still there. A file drops its database
// after its last test; one whose worker died or that was stopped before its last hook would
// leave it behind without this.
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { dropRunDatabases, runServers } from './test-databases.js';

export default function setup(project: TestProject): () => Promise<void> {
  const run = randomBytes(3).toString('hex');
  project.provide('pgmcpTestRun', run);
  return async () => {
    for (const url of runServers()) {
      const dropped = await dropRunDatabases(url, run);
      if (dropped.length > 0) {
        process.stderr.write(
          `pgmcp tests: dropped ${dropped.length} test database(s) left behind: ${dropped.join(', ')}\n`,
        );
      }
    }
  };
}
