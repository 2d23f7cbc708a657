// The HTTP status of an MCP answer, decided in one place from the JSON-RPC code and the era
// (mcp/ knows nothing of HTTP). Legacy era: errors travel in a 200 body, as clients of those
// revisions expect. 2026-07-28: the request's own failure is a 4xx (reference/mcp-protocol.md).
// In both eras a caller who must sign in gets 401 and one who lacks a role 403.
import type { Outcome } from '../mcp/dispatcher.js';
import { RpcCodes } from '../mcp/jsonrpc.js';

export function statusOf(outcome: Pick<Outcome, 'response' | 'era' | 'category'>): number {
  const { response } = outcome;
  if (!('error' in response)) return 200;
  const { code } = response.error;
  // Headers that contradict the body are refused before any era rule applies, and a caller
  // who must authenticate or lacks a role gets the HTTP answer clients act on (as NpgsqlRest does).
  if (code === RpcCodes.HEADER_MISMATCH) return 400;
  if (code === RpcCodes.AUTH_REQUIRED && outcome.category === 'auth') return 401;
  if (code === RpcCodes.AUTH_REQUIRED && outcome.category === 'forbidden') return 403;
  if (outcome.era === 'legacy') return 200;
  if (code === RpcCodes.METHOD_NOT_FOUND) return 404;
  if (code === RpcCodes.INVALID_PARAMS && outcome.category === 'not_found') return 404;
  switch (code) {
    case RpcCodes.PARSE_ERROR:
    case RpcCodes.INVALID_REQUEST:
    case RpcCodes.INVALID_PARAMS:
    case RpcCodes.MISSING_CAPABILITY:
    case RpcCodes.UNSUPPORTED_VERSION:
      return 400;
    case RpcCodes.INTERNAL_ERROR:
      // A failure the protocol core raised itself is the server's (500); a handler's failure,
      // mapped by mcp/errors.ts with its category, travels in the body as before.
      return outcome.category === undefined ? 500 : 200;
    default:
      return 200;
  }
}
