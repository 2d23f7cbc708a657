// Field types several sections of the configuration share (config/schema.ts): bounded
// integers, booleans, lists, origins and hosts, database URLs, role names. Each gives every
// failure of a field the same sentence, naming the whole rule.
import type { z } from 'zod';
import { databaseUrlProblem } from './database-url.js';
import { isKeywordForm, keywordsToUrl } from './multi-host.js';
import { zod } from './zod.js';

// Each helper gives every failure of a field the same sentence, so "got -1" and "got 'abc'"
// read alike and the message states the whole rule rather than the one check that tripped.
export function intIn(min: number, max?: number) {
  const error =
    max !== undefined
      ? `expected an integer between ${min} and ${max}`
      : min === 1
        ? 'expected a positive integer'
        : `expected an integer of at least ${min}`;
  const base = zod.int({ error }).min(min, { error });
  return max === undefined ? base : base.max(max, { error });
}

export const bool = () => zod.boolean({ error: 'expected true or false' });

export const stringList = (item: z.ZodString) =>
  zod.array(item, { error: 'expected a list of strings' });

export const portSchema = intIn(0, 65535);

// An origin is what a browser sends: scheme://host[:port], never a path or trailing slash.
export const originItem = zod
  .string({ error: 'expected a string' })
  .regex(/^(\*|[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+)$/i, {
    error: 'expected an origin such as https://app.example.com (no path or trailing slash) or *',
  });

// A Host header value: name or IPv4 with optional port, or a bracketed IPv6 literal.
export const hostItem = zod
  .string({ error: 'expected a string' })
  .regex(/^([^\s/:@[\]]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/i, {
    error: 'expected a host or host:port such as mcp.example.com:8443 (no scheme)',
  });

// Checked as the driver will read it (databaseUrlProblem), so a URL it cannot use stops pgmcp
// here, naming the key and its source. The value is a secret: no message quotes it.
export const POSTGRES_SCHEME = /^postgres(ql)?:\/\/./i;
const databaseUrlText = zod.preprocess(
  // libpq's keyword form (`host=a,b port=5432 dbname=app`) is read as the URL it means.
  (value) => {
    if (typeof value !== 'string' || !isKeywordForm(value)) return value;
    const url = keywordsToUrl(value);
    return typeof url === 'string' ? url : value;
  },
  zod.string({ error: 'expected a postgres:// URL or null' }).superRefine((value, ctx) => {
    if (isKeywordForm(value)) {
      const problem = keywordsToUrl(value);
      const why = typeof problem === 'string' ? 'it cannot be read' : problem[0];
      ctx.addIssue({ code: 'custom', message: `a keyword connection string: ${why}` });
      return;
    }
    if (!POSTGRES_SCHEME.test(value)) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected a URL starting with postgres:// or postgresql://',
      });
      return;
    }
    const problem = databaseUrlProblem(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }),
);

export const databaseUrl = databaseUrlText.nullable();

/** A list of URLs (database.readReplicas): each checked as databaseUrl, none null. */
export const databaseUrls = zod.array(databaseUrlText, {
  error: 'expected a list of postgres:// URLs',
});

// A pgmcp role (for tools.<name>.roles, @authorize, token --role): letters, digits, _ . : -
export const roleName = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: 'expected a role name such as analyst or admin' });
