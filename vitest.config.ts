import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    // The run's name for the test databases, and the drop of those left behind after it.
    globalSetup: ['test/helpers/global-setup.ts'],
    projects: [
      // The server's suites: unit tests beside the code, integration and e2e under test/.
      {
        extends: true,
        test: { name: 'server', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
      },
      // The web client's component tests (jsdom), configured in its workspace.
      'web/vitest.config.ts',
    ],
  },
});
