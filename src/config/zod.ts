// zod for the configuration's schema. Every command reads a configuration before it does
// anything, so zod's load time is part of every cold start (bench/cold-start.mjs): bin/pgmcp runs
// the bundle (scripts/bundle.mjs), which holds only the parts of zod used here, in one file.
import { z } from 'zod';

// Exported as the binding itself, never copied into a value, so that the bundler can see which
// members are used and leave the rest of zod (its ~40 message locales among them) out.
export { z as zod };

/** A non-empty string. */
export const text = () =>
  z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' });

/** A non-empty string, or null. */
export const optionalText = () =>
  z
    .string({ error: 'expected a string or null' })
    .min(1, { error: 'expected a non-empty string or null' })
    .nullable();

/** A section of the file: a mapping with only the keys it names. */
export const section = <T extends z.ZodRawShape>(shape: T) =>
  z.strictObject(shape, { error: 'expected a mapping of keys to values' });
