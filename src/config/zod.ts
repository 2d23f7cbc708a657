// zod for the configuration's schema, from zod's CommonJS build: require() loads its ~80 files
// about a fifth faster than the ES module graph, and every command reads a configuration
// before it does anything (cold start, bench/cold-start.mjs). Types come from `import type`.
import { createRequire } from 'node:module';
import type * as Zod from 'zod';

export const zod = (createRequire(import.meta.url)('zod') as typeof Zod).z;
