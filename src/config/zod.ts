// zod for the configuration's schema, from zod's CommonJS build: require() loads its ~80 files
// about a fifth faster than the ES module graph, and every command reads a configuration
// before it does anything (cold start, bench/cold-start.mjs). Types come from `import type`.
import { createRequire } from 'node:module';
import type * as Zod from 'zod';
import type { z } from 'zod';

export const zod = (createRequire(import.meta.url)('zod') as typeof Zod).z;

/** A non-empty string. */
export const text = () =>
  zod.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' });

/** A non-empty string, or null. */
export const optionalText = () =>
  zod
    .string({ error: 'expected a string or null' })
    .min(1, { error: 'expected a non-empty string or null' })
    .nullable();

/** A section of the file: a mapping with only the keys it names. */
export const section = <T extends z.ZodRawShape>(shape: T) =>
  zod.strictObject(shape, { error: 'expected a mapping of keys to values' });
