// Component tests in jsdom; run from the root by `npm test` (a project of the root config).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineProject } from 'vitest/config';

export default defineProject({
  plugins: [react()],
  test: {
    name: 'web',
    root: fileURLToPath(new URL('.', import.meta.url)),
    environment: 'jsdom',
    include: ['src/**/*.test.tsx', 'src/**/*.test.ts', 'apps/**/*.test.ts'],
    setupFiles: ['./src/test-setup.ts'],
  },
});
