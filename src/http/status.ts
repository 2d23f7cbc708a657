// The HTTP status of an MCP answer, applied in one place from the error table's MCP_HTTP_STATUS
// (core/error-table.ts) by the JSON-RPC code, the category that made it and the era (mcp/ knows
// nothing of HTTP). Legacy era: errors travel in a 200 body, as clients of those revisions
// expect; 2026-07-28: the request's own failure is a 4xx (reference/mcp-protocol.md). In both
// eras a caller who must sign in gets 401 and one who lacks a role 403.
import { MCP_HTTP_STATUS } from '../core/error-table.js';
import type { Outcome } from '../mcp/dispatcher.js';

export function statusOf(outcome: Pick<Outcome, 'response' | 'era' | 'category'>): number {
  const { response, category } = outcome;
  if (!('error' in response)) return 200;
  const row = MCP_HTTP_STATUS[response.error.code as keyof typeof MCP_HTTP_STATUS];
  if (row === undefined) return 200;
  const made = category === undefined ? undefined : (row.made?.[category] ?? row.anyCategory);
  return (made ?? row)[outcome.era];
}
