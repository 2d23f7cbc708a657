// Every tool call of an app goes to the audit log (HTTP with the state database; stdio to
// audit.file): the MCP dispatcher's and the chat agent's alike, both reported through the app's
// exchange records (tools/tool-call-record.ts). Its own module so stdio can use it without
// loading the HTTP stack.
import type { AuditLog } from '../state/index.js';
import type { App } from './app.js';

export function auditToolCalls(app: App, audit: AuditLog): void {
  app.onExchange((record) => {
    if (record.method !== 'tools/call' || !record.name) return;
    // The primary or a read replica (database.readReplicas): the last server the call used.
    const server = record.server ?? null;
    audit.toolCall({
      principal: record.principal,
      database: record.database ?? app.db.name,
      tool: record.name,
      durationMs: record.durationMs,
      outcome: record.outcome === 'ok' ? 'success' : 'failure',
      ...(record.errorCode != null ? { errorCode: String(record.errorCode) } : {}),
      ...(record.conversationId != null ? { conversationId: record.conversationId } : {}),
      ...(server !== null ? { server } : {}),
    });
  });
}
