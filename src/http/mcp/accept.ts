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

/** The last Accept header read and its verdict: a client sends the same one on every request. */
let last: { header: string | undefined; acceptance: Acceptance } | null = null;

export function acceptanceOf(req: FastifyRequest): Acceptance {
  const accept = req.headers.accept;
  if (last !== null && last.header === accept) return last.acceptance;
  const acceptance: Acceptance = Object.freeze({
    json: accept === undefined || accepts(accept, 'application/json'),
    sse: accepts(accept, 'text/event-stream'),
  });
  last = { header: accept, acceptance };
  return acceptance;
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
