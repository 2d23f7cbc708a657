// The Accept stage: what the client says it can read. POST needs JSON (and, for everything but a
// sessionless legacy request, SSE too); GET needs SSE.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_REFUSALS } from '../../core/error-table.js';
import { refuse } from '../refuse.js';
import { accepts } from '../replies.js';

export interface Acceptance {
  /** application/json; no Accept at all is read as JSON (curl, gateways). */
  readonly json: boolean;
  /** text/event-stream. */
  readonly sse: boolean;
}

export function acceptanceOf(req: FastifyRequest): Acceptance {
  const accept = req.headers.accept;
  return {
    json: accept === undefined || accepts(accept, 'application/json'),
    sse: accepts(accept, 'text/event-stream'),
  };
}

/** 406, naming the media types the Accept header must include. */
export function notAcceptable(req: FastifyRequest, reply: FastifyReply, types: string): void {
  refuse(
    req,
    reply,
    HTTP_REFUSALS.NOT_ACCEPTABLE,
    `Not Acceptable: the Accept header must include ${types}.`,
  );
}
