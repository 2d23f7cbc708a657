// The HTTP status of an MCP answer, decided in one place from the JSON-RPC code and the era
// (mcp/ knows nothing of HTTP). Legacy era: errors travel in a 200 body, as clients of those
// revisions expect. 2026-07-28: the request's own failure is a 4xx (reference/mcp-protocol.md).
import type { Outcome } from '../mcp/dispatcher.js';
import { RpcCodes } from '../mcp/jsonrpc.js';

export function statusOf(outcome: Pick<Outcome, 'response' | 'era' | 'category'>): number {
  const { response } = outcome;
  if (!('error' in response)) return 200;
  const { code } = response.error;
  // Headers that contradict the body are refused before any era rule applies.
  if (code === RpcCodes.HEADER_MISMATCH) return 400;
  if (outcome.era === 'legacy') return 200;
  if (code === RpcCodes.METHOD_NOT_FOUND || outcome.category === 'not_found') return 404;
  switch (code) {
    case RpcCodes.PARSE_ERROR:
    case RpcCodes.INVALID_REQUEST:
    case RpcCodes.INVALID_PARAMS:
    case RpcCodes.MISSING_CAPABILITY:
    case RpcCodes.UNSUPPORTED_VERSION:
    // -32001 here comes from a tool, resource or prompt, not from HTTP authentication
    // (which answers 401 before the dispatcher runs); SDK clients treat 401/403 as an
    // authorization challenge and never show the body, so the era's 400 carries it.
    case RpcCodes.AUTH_REQUIRED:
      return 400;
    default:
      // -32603: the request was understood; the JSON-RPC error is the answer.
      return 200;
  }
}
