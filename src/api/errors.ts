// Every failure on /api becomes `{"error": "..."}` with a status that says whose fault it was.
// AppErrors carry their own (secret-free) messages; anything else is logged with a reference
// and answered with that reference only, never a stack trace.
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ErrorCodes, isAppError, type ErrorCategory } from '../core/errors.js';

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

const STATUS: Record<ErrorCategory, number> = {
  input: 400,
  not_found: 404,
  auth: 401,
  forbidden: 403,
  conflict: 409,
  timeout: 504,
  unavailable: 503,
  database: 500,
  config: 500,
  internal: 500,
};

interface Answer {
  status: number;
  message: string;
  headers: Record<string, string>;
}

function answerFor(error: unknown, logger: Logger, request: FastifyRequest): Answer {
  if (error instanceof ApiError) {
    return { status: error.statusCode, message: error.message, headers: { ...error.headers } };
  }
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation) {
    return { status: 400, message: `invalid request: ${fastifyError.message}`, headers: {} };
  }
  if (isAppError(error) && STATUS[error.category] < 500) {
    const headers: Record<string, string> = {};
    const retry = error.details?.['retryAfterSeconds'];
    if (error.code === ErrorCodes.LOGIN_LOCKED && typeof retry === 'number') {
      headers['retry-after'] = String(retry);
    }
    if (error.category === 'auth' && error.code !== ErrorCodes.LOGIN_LOCKED) {
      headers['www-authenticate'] = BEARER_CHALLENGE;
    }
    return { status: STATUS[error.category], message: error.message, headers };
  }
  // Fastify's own client errors (unsupported media type, body too large) say nothing secret.
  const status = fastifyError.statusCode;
  if (!isAppError(error) && typeof status === 'number' && status >= 400 && status < 500) {
    return { status, message: fastifyError.message ?? 'bad request', headers: {} };
  }
  const ref = randomUUID().slice(0, 8);
  // Message and code only: a driver error's detail can quote the row it choked on.
  const err = error as { message?: unknown; code?: unknown; name?: unknown };
  logger.error(
    {
      ref,
      method: request.method,
      route: request.routeOptions.url,
      err: { name: err.name, message: err.message, code: err.code },
    },
    'api request failed',
  );
  if (isAppError(error) && error.category === 'unavailable') {
    // A configured database is named (its name is no secret; why it failed stays in the log).
    const database = error.details?.['database'];
    if (typeof database === 'string') {
      return {
        status: 503,
        message: `database ${database} is unavailable; try again later (ref ${ref})`,
        headers: { 'retry-after': '5' },
      };
    }
    // The message may name the state database's host: it stays in the log.
    return {
      status: 503,
      message: `the service is unavailable; try again later (ref ${ref})`,
      headers: { 'retry-after': '5' },
    };
  }
  return { status: 500, message: `internal error (ref ${ref})`, headers: {} };
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
    const { status, message, headers } = answerFor(error, logger, request);
    return reply.code(status).headers(headers).send({ error: message });
  };
}
