// What the DBA tools share: the database, the access policy and the call limits.
import type { ToolResult } from '../../core/content.js';
import type { Database } from '../../db/database.js';
import type { AccessPolicy } from '../access-policy.js';

export interface DbaDeps {
  db: Database;
  policy: AccessPolicy;
  statementTimeoutMs: number;
  deniedFunctions: readonly string[];
}

/** A result whose rows the clients show as a table: text for the model, rows for the clients. */
export function tableResult(text: string, structured: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

export const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
export const round = (n: number): number => Math.round(n * 100) / 100;

/** Result columns as query_database describes them (the web and terminal clients draw tables from them). */
export const columnsOf = (
  spec: readonly (readonly [string, string])[],
): { name: string; type: string }[] => spec.map(([name, type]) => ({ name, type }));

export const COLUMNS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: { name: { type: 'string' }, type: { type: 'string' } },
    required: ['name', 'type'],
  },
} as const;
