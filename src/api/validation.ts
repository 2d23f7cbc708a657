// Bodies, params and query strings of /api are checked by the route schemas before a handler
// runs, with an Ajv of our own: no type coercion and no silent removal of unknown fields, so a
// misspelt field ("role" for "roles") is a 400, not a change that quietly did nothing.
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';

const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
});

class BadJson extends Error {
  readonly statusCode = 400;
  constructor() {
    // Fixed text: JSON.parse's own message quotes the body, and the body may hold a password.
    super('the body is not valid JSON');
  }
}

/** Installs the JSON body parser and the schema compiler in this (encapsulated) scope. */
export function useStrictJson(scope: FastifyInstance): void {
  scope.setValidatorCompiler(({ schema }) => ajv.compile(schema));
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new BadJson(), undefined);
    }
  });
}

// Shared pieces of the route schemas.
export const NAME = { type: 'string', minLength: 1, maxLength: 64 } as const;
export const ROLES = {
  type: 'array',
  maxItems: 64,
  items: { type: 'string', minLength: 1, maxLength: 64 },
} as const;
export const PG_ROLE = {
  anyOf: [{ type: 'string', minLength: 1, maxLength: 63 }, { type: 'null' }],
} as const;
