// What the built-in tools, resources and prompts share: one read-only transaction per call,
// database errors rewritten for a model, the annotations of a read-only tool.
import type pg from 'pg';
import { AppError, ErrorCodes, isAppError } from '../../core/errors.js';
import type { ResourceReadResult } from '../../core/content.js';
import type { CallContext, ToolAnnotations } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';

/** Run `work` in one READ ONLY transaction with the caller's identity, timeout and cancellation. */
export function readOnlyCall<T>(
  db: Database,
  timeoutMs: number,
  ctx: CallContext,
  work: (client: pg.PoolClient) => Promise<T>,
  /** The SQL an error position refers to, so the message can point at it. */
  sqlForErrors?: () => string | undefined,
): Promise<T> {
  return readCall(false, db, timeoutMs, ctx, work, sqlForErrors);
}

/**
 * As readOnlyCall, for a read that may run on a read replica (database.readReplicas): data a
 * moment old answers it as well (not the DBA tools: their statistics are the primary's own).
 */
export function replicaReadCall<T>(
  db: Database,
  timeoutMs: number,
  ctx: CallContext,
  work: (client: pg.PoolClient) => Promise<T>,
  sqlForErrors?: () => string | undefined,
): Promise<T> {
  return readCall(true, db, timeoutMs, ctx, work, sqlForErrors);
}

async function readCall<T>(
  replicaOk: boolean,
  db: Database,
  timeoutMs: number,
  ctx: CallContext,
  work: (client: pg.PoolClient) => Promise<T>,
  sqlForErrors?: () => string | undefined,
): Promise<T> {
  try {
    return await db.withTransaction(
      { readOnly: true, replicaOk, timeoutMs, principal: ctx.principal, signal: ctx.signal },
      work,
    );
  } catch (error) {
    if (isAppError(error) && error.category !== 'internal' && error.details?.['sqlstate']) {
      throw new AppError(error.code, describeDbError(error, sqlForErrors?.()), {
        category: error.category,
        details: error.details,
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Text from a model is parsed by libpg-query with standard_conforming_strings on; the
 * server must read it the same way, whatever the role or database default says.
 */
export async function sameLexerAsParser(client: pg.ClientBase): Promise<void> {
  await client.query("SELECT pg_catalog.set_config('standard_conforming_strings', 'on', true)");
}

export function readOnlyAnnotations(title: string): ToolAnnotations {
  return {
    title,
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  };
}

export function notFound(message: string, details?: Record<string, unknown>): AppError {
  return new AppError(ErrorCodes.TOOL_INPUT_INVALID, message, {
    category: 'not_found',
    ...(details ? { details } : {}),
  });
}

export function invalidInput(message: string): AppError {
  return new AppError(ErrorCodes.TOOL_INPUT_INVALID, message, { category: 'input' });
}

export function resourceNotFound(uri: string, message: string): AppError {
  return new AppError(ErrorCodes.RESOURCE_NOT_FOUND, message, {
    category: 'not_found',
    details: { uri },
  });
}

/** A resource answer of one JSON document. */
export function jsonContents(uri: string, value: unknown): ResourceReadResult {
  return {
    contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }],
  };
}

/** Case-sensitive match first; otherwise the one case-insensitive match, if exactly one. */
export function pickName<T>(items: readonly T[], key: (item: T) => string, wanted: string): T[] {
  const exact = items.filter((item) => key(item) === wanted);
  if (exact.length > 0) return exact;
  const lower = wanted.toLowerCase();
  return items.filter((item) => key(item).toLowerCase() === lower);
}

export const plural = (n: number, word: string, many = `${word}s`): string =>
  `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;
