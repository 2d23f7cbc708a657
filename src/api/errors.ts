// Every failure on /api becomes `{"error": "..."}` with a status that says whose fault it was,
// by the error table (core/error-table.ts). AppErrors carry their own (secret-free) messages;
// what failed on the server's side is logged with a reference and answered with that
// reference only, never a stack trace.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { answerOf, logWithReference } from '../core/error-table.js';
import { isAppError, type AppError } from '../core/errors.js';

/** A failure the handlers raise on purpose, answered with its status and message as they are. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(statusCode: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.headers = headers;
  }
}

/** The challenge sent with our own 401s (the HTTP layer's hook sends its own fuller one). */
export const BEARER_CHALLENGE = 'Bearer realm="pgmcp"';

interface Answer {
  status: number;
  body: { error: string; code?: string };
  headers: Record<string, string>;
}

/** The one place a failure on /api becomes its answer: the error table's REST columns. */
function answerFor(error: unknown, logger: Logger, request: FastifyRequest): Answer {
  if (error instanceof ApiError) {
    return {
      status: error.statusCode,
      body: { error: error.message },
      headers: { ...error.headers },
    };
  }
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation) {
    return {
      status: 400,
      body: { error: `invalid request: ${fastifyError.message}` },
      headers: {},
    };
  }
  if (isAppError(error)) return appErrorAnswer(error, logger, request);
  // Fastify's own client errors (unsupported media type, body too large) say nothing secret.
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: { error: fastifyError.message ?? 'bad request' }, headers: {} };
  }
  const ref = logged(error, logger, request);
  return { status: 500, body: { error: `internal error (ref ${ref})` }, headers: {} };
}

function appErrorAnswer(error: AppError, logger: Logger, request: FastifyRequest): Answer {
  const row = answerOf(error);
  const headers: Record<string, string> = {};
  const retry =
    row.retryAfter === 'details' ? error.details?.['retryAfterSeconds'] : row.retryAfter;
  if (typeof retry === 'number') headers['retry-after'] = String(retry);
  if (row.challenge) headers['www-authenticate'] = BEARER_CHALLENGE;
  switch (row.rest) {
    case 'message':
      return { status: row.status, body: { error: error.message }, headers };
    case 'message-and-code':
      return { status: row.status, body: { error: error.message, code: error.code }, headers };
    case 'unavailable': {
      const ref = logged(error, logger, request);
      // A configured database is named (its name is no secret; why it failed stays in the log);
      // any other message may name the state database's host: it stays in the log.
      const database = error.details?.['database'];
      const what = typeof database === 'string' ? `database ${database} is` : 'the service is';
      return {
        status: row.status,
        body: { error: `${what} unavailable; try again later (ref ${ref})` },
        headers,
      };
    }
    case 'reference': {
      const ref = logged(error, logger, request);
      return { status: row.status, body: { error: `internal error (ref ${ref})` }, headers };
    }
  }
}

/** Logs a failure answered by reference only; the reference for the answer. */
function logged(error: unknown, logger: Logger, request: FastifyRequest): string {
  // Message and code only: a driver error's detail can quote the row it choked on.
  const err = error as { message?: unknown; code?: unknown; name?: unknown };
  return logWithReference(
    logger,
    {
      method: request.method,
      route: request.routeOptions.url,
      err: { name: err.name, message: err.message, code: err.code },
    },
    'api request failed',
  );
}

const ERROR_BODY = {
  type: 'object',
  // Not required, and open: a 4xx a route declares itself (the pgEdge agent's `success`) or the HTTP
  // layer's hooks send must still serialize (a required property missing would be a 500).
  properties: { error: { type: 'string' } },
  additionalProperties: true,
} as const;

/** The failures any /api route can answer, as `createErrorHandler` and the HTTP layer send them. */
export const ERROR_RESPONSES: Readonly<Record<number, unknown>> = {
  400: { description: 'the request is malformed (body, parameters)', ...ERROR_BODY },
  401: { description: 'authentication is required or failed', ...ERROR_BODY },
  403: { description: 'the caller may not do this (role, database, Origin)', ...ERROR_BODY },
  404: { description: 'what the request names does not exist', ...ERROR_BODY },
  500: { description: 'internal error (a reference to the log)', ...ERROR_BODY },
  503: { description: 'a database is unavailable; Retry-After says when to try', ...ERROR_BODY },
};

export function createErrorHandler(logger: Logger) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const { status, body, headers } = answerFor(error, logger, request);
    return reply.code(status).headers(headers).send(body);
  };
}
