// Small helpers for answering with JSON bodies (a refusal goes through refuse.ts).
import type { FastifyReply } from 'fastify';
import { serialize } from '../mcp/serialize.js';

export function sendJson(
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(status)
    .headers({ 'content-type': 'application/json', ...headers })
    .send(serialize(body));
}

/** Whether an Accept header admits a media type (wildcards included). */
export function accepts(header: string | undefined, type: string): boolean {
  if (!header) return false;
  const [major] = type.split('/');
  return header
    .split(',')
    .map((part) => part.split(';')[0]!.trim().toLowerCase())
    .some((media) => media === type || media === '*/*' || media === `${major}/*`);
}
