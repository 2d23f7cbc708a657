// query_database: one SQL statement, judged by PostgreSQL's own parser (sql-guard), checked
// against the access policy and the plan cost limits, then run in one round trip inside a
// transaction that is READ ONLY unless the database allows writes, with a timeout, a row
// cap and a byte cap. Answers as TSV for the model and structuredContent for programs.
import type pg from 'pg';
import { AppError, ErrorCodes, isAppError } from '../../core/errors.js';
import type { Signer } from '../../core/signed.js';
import type { CallContext, ToolSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';
import type { PipelineResult } from '../../db/pipeline.js';
import { MASK, type AccessPolicy } from '../access-policy.js';
import { checkStatement, type GuardResult } from '../sql-guard.js';
import { jsonValue, toTsv } from '../tsv.js';
import { tryParse } from './parse-tree.js';
import { enforcePolicy, resolveRelations, type ResolvedRelation } from './relation-access.js';
import { createWriteConfirmations, type WriteConfirmations } from './write-confirmation.js';
import { typeNames } from './type-names.js';

export interface QueryLimits {
  defaultRows: number;
  maxRows: number;
  maxResultBytes: number;
  statementTimeoutMs: number;
}

export interface QueryDatabaseOptions {
  limits: QueryLimits;
  allowWrites: boolean;
  deniedFunctions: readonly string[];
  policy: AccessPolicy;
  /** Refuse statements whose estimated plan is above these (null: no limit). */
  maxPlanCost: number | null;
  maxPlanRows: number | null;
  /** Seals write-confirmation nonces. */
  signer: Signer;
}

interface Columns {
  columns: { name: string; type: string }[];
  /** Indexes of result columns whose values are masked. */
  masked: Set<number>;
}

export function createQueryDatabaseTool(db: Database, options: QueryDatabaseOptions): ToolSpec {
  const { limits, allowWrites, policy } = options;
  const confirmations: WriteConfirmations = createWriteConfirmations(options.signer);
  // Resolution queries run on their own pooled connection, outside the caller's transaction.
  const pool = db.pool as unknown as pg.ClientBase;

  const description = [
    'Run one SQL statement against the PostgreSQL database and return the rows as tab-separated text (header line first; NULL is an empty field).',
    allowWrites
      ? 'Writes are allowed on this database, but each write is first previewed and must be confirmed (by the user, or by calling again with the confirm nonce the preview gives).'
      : 'The statement runs in a READ ONLY transaction: INSERT/UPDATE/DELETE/DDL are refused.',
    'Use it for questions a SELECT can answer (CTEs, window functions, JSON operators, EXPLAIN are fine); call get_schema_info first when you do not know the tables, and count_rows for a plain count.',
    `At most ${limits.maxRows} rows per call (default ${limits.defaultRows}); when more exist the answer says which offset to ask for next.`,
    `Statements time out after ${limits.statementTimeoutMs} ms. One statement per call; no transaction control or SET. Pass values as params with $1, $2 … placeholders rather than pasting them into the SQL.`,
    'Example: {"query": "SELECT id, name FROM customers WHERE country = $1 ORDER BY id", "params": ["PT"], "limit": 20}',
  ].join(' ');

  /** The policy's verdict on the relations and columns; returns which result columns to mask. */
  const applyPolicy = async (
    sql: string,
    guard: GuardResult,
  ): Promise<{
    relations: ResolvedRelation[];
    maskedAttrs: Set<string>;
    maskedNames: Set<string>;
  }> => {
    const none = { relations: [], maskedAttrs: new Set<string>(), maskedNames: new Set<string>() };
    if (!policy.active) return none;
    const relations = await resolveRelations(pool, guard.relations);
    const parsed = tryParse(sql);
    const columns = await enforcePolicy(pool, policy, relations, parsed.ok ? parsed.tree : {});
    const maskedAttrs = new Set<string>();
    const maskedNames = new Set<string>();
    for (const { relation: rel, attnum, name } of columns) {
      if (policy.columnMasked(rel.schema, rel.name, name)) {
        maskedAttrs.add(`${rel.oid}:${attnum}`);
        maskedNames.add(name);
      }
    }
    return { relations, maskedAttrs, maskedNames };
  };

  /** Refuse a statement whose estimated plan is above the configured limits. */
  const checkPlanCost = async (
    sql: string,
    params: unknown[],
    guard: GuardResult,
    ctx: CallContext,
  ) => {
    if (options.maxPlanCost === null && options.maxPlanRows === null) return;
    if (guard.statement === 'ExplainStmt' && guard.analyze) {
      // EXPLAIN ANALYZE runs the statement, and an EXPLAIN cannot be estimated in turn.
      throw new AppError(
        ErrorCodes.TOOL_INPUT_INVALID,
        'Refused: EXPLAIN ANALYZE runs the query, and this database limits estimated plan cost. Use EXPLAIN without ANALYZE to see the plan.',
        { category: 'input' },
      );
    }
    if (guard.statement !== 'SelectStmt') return;
    const plan = await estimate(sql, params, ctx);
    const tooCostly = options.maxPlanCost !== null && plan.cost > options.maxPlanCost;
    const tooMany = options.maxPlanRows !== null && plan.rows > options.maxPlanRows;
    if (tooCostly || tooMany) {
      const what = tooCostly
        ? `its estimated cost ${Math.round(plan.cost)} is above the limit ${options.maxPlanCost}`
        : `it is estimated to produce ${Math.round(plan.rows)} rows, above the limit ${options.maxPlanRows}`;
      throw new AppError(
        ErrorCodes.TOOL_INPUT_INVALID,
        `Refused before running: ${what}. Narrow the query: filter on indexed columns, aggregate instead of listing rows, add LIMIT, or join fewer tables; execute_explain shows the plan.`,
        { category: 'input', details: { estimatedCost: plan.cost, estimatedRows: plan.rows } },
      );
    }
  };

  /** The planner's estimate for a statement (EXPLAIN without ANALYZE executes nothing). */
  const estimate = async (
    sql: string,
    params: unknown[],
    ctx: CallContext,
  ): Promise<{ cost: number; rows: number; plan: unknown }> => {
    const result = await db.runStatement({
      // One statement (the guard and the extended protocol both insist), prefixed by EXPLAIN.
      sql: `EXPLAIN (FORMAT JSON) ${sql}`,
      params,
      offset: 0,
      limit: 1,
      maxBytes: 10 * 1024 * 1024,
      readOnly: true,
      timeoutMs: limits.statementTimeoutMs,
      principal: ctx.principal,
      signal: ctx.signal,
    });
    const raw = result.rows[0]?.[0];
    const json = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
      Plan?: { 'Total Cost'?: number; 'Plan Rows'?: number };
    }[];
    const top = json[0]?.Plan ?? {};
    return { cost: top['Total Cost'] ?? 0, rows: top['Plan Rows'] ?? 0, plan: json };
  };

  const describeColumns = async (
    result: PipelineResult,
    referencedMasked: boolean,
    maskedAttrs: Set<string>,
  ): Promise<Columns> => {
    const names = await typeNames(
      pool,
      result.fields.map((f) => f.dataTypeID),
    );
    const masked = new Set<number>();
    result.fields.forEach((f, i) => {
      if (maskedAttrs.has(`${f.tableID}:${f.columnID}`)) masked.add(i);
      // A computed column over a masked one (lower(email)) would show what the mask hides.
      else if (referencedMasked && f.tableID === 0) masked.add(i);
    });
    return {
      columns: result.fields.map((f) => ({
        name: f.name,
        type: names.get(f.dataTypeID) ?? `oid ${f.dataTypeID}`,
      })),
      masked,
    };
  };

  return {
    name: 'query_database',
    title: 'Query the database',
    description,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'One SQL statement.' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: limits.maxRows,
          default: limits.defaultRows,
          description: `Rows to return (1-${limits.maxRows}).`,
        },
        offset: {
          type: 'integer',
          minimum: 0,
          maximum: 1_000_000_000,
          default: 0,
          description: 'Rows to skip (for the next page).',
        },
        params: {
          type: 'array',
          description: 'Values for $1, $2 … placeholders.',
          items: { type: ['string', 'number', 'boolean', 'null'] },
        },
        ...(allowWrites
          ? {
              confirm: {
                type: 'string',
                description: 'The nonce from a write preview, to run that exact write.',
              },
            }
          : {}),
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        columns: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, type: { type: 'string' } },
            required: ['name', 'type'],
          },
        },
        rows: { type: 'array', items: { type: 'array' } },
        rowCount: { type: 'integer' },
        truncated: { type: 'boolean' },
        nextOffset: { type: ['integer', 'null'] },
        command: { type: ['string', 'null'] },
        confirmation: {
          type: 'object',
          description: 'Present when a write was previewed instead of run.',
          properties: { nonce: { type: 'string' }, estimatedRows: { type: 'number' }, plan: {} },
        },
      },
      required: ['columns', 'rows', 'rowCount', 'truncated', 'nextOffset'],
    },
    annotations: {
      title: 'Query the database',
      readOnlyHint: !allowWrites,
      destructiveHint: allowWrites,
      idempotentHint: !allowWrites,
      openWorldHint: false,
    },
    async call(args, ctx) {
      const query = args['query'] as string;
      const limit = (args['limit'] as number | undefined) ?? limits.defaultRows;
      const offset = (args['offset'] as number | undefined) ?? 0;
      const params = (args['params'] as unknown[] | undefined) ?? [];
      try {
        const guard = checkStatement(query, {
          allowWrites,
          deniedFunctions: options.deniedFunctions,
        });
        const { maskedAttrs, maskedNames } = await applyPolicy(query, guard);
        // A computed column (lower(email), row_to_json(t), t.to_jsonb) may carry a masked
        // value: when a referenced table has masked columns, computed columns are masked too.
        const referencedMasked = maskedNames.size > 0;
        if (guard.kind === 'write') {
          const preview = await confirmWrite(query, params, ctx, args['confirm']);
          if (preview) return preview;
        } else {
          await checkPlanCost(query, params, guard, ctx);
        }
        const result = await db.runStatement({
          sql: query,
          params,
          offset,
          limit,
          maxBytes: limits.maxResultBytes,
          readOnly: guard.kind === 'read' || !allowWrites,
          timeoutMs: limits.statementTimeoutMs,
          principal: ctx.principal,
          signal: ctx.signal,
        });
        const { columns, masked } = await describeColumns(result, referencedMasked, maskedAttrs);
        const rows = result.rows.map((row) =>
          row.map((v, i) => (masked.has(i) && v !== null ? MASK : v)),
        );
        return answer(columns, rows, result, offset);
      } catch (error) {
        if (isAppError(error) && error.category !== 'internal') {
          throw new AppError(error.code, describeDbError(error, query), {
            category: error.category,
            details: error.details,
            cause: error,
          });
        }
        throw error;
      }
    },
  };

  /**
   * A write runs only once confirmed: by the user through elicitation where the client
   * supports it, else by calling again with the nonce of a preview. Returns the preview (or
   * the refusal) to answer with, or null when the write may run.
   */
  async function confirmWrite(query: string, params: unknown[], ctx: CallContext, nonce: unknown) {
    if (typeof nonce === 'string') {
      confirmations.redeem(nonce, query, params); // throws when wrong, used or expired
      return null;
    }
    const explained = await estimate(query, params, ctx).catch(() => null);
    const estimatedRows = explained?.rows ?? null;
    const summary = `This statement writes to the database${estimatedRows !== null ? ` (the planner estimates ${Math.round(estimatedRows)} row${estimatedRows === 1 ? '' : 's'})` : ''}.`;
    if (ctx.clientSupports('elicitation')) {
      const { confirm } = await ctx.requestInput({
        confirm: {
          method: 'elicitation/create',
          params: {
            message: `${summary}\n\n${query}\n\nRun it?`,
            requestedSchema: {
              type: 'object',
              properties: { run: { type: 'boolean', title: 'Run this write', default: false } },
              required: ['run'],
            },
          },
        },
      });
      const answer = confirm as { action?: string; content?: { run?: unknown } };
      if (answer.action === 'accept' && answer.content?.run === true) return null;
      return {
        content: [
          { type: 'text' as const, text: `${summary} Not run: the user did not confirm it.` },
        ],
        structuredContent: {
          columns: [],
          rows: [],
          rowCount: 0,
          truncated: false,
          nextOffset: null,
          command: null,
        },
      };
    }
    const issued = confirmations.issue(query, params);
    return {
      content: [
        {
          type: 'text' as const,
          text: [
            `${summary} It has NOT run yet.`,
            explained ? `Plan:\n${JSON.stringify(explained.plan)}` : '',
            `To run exactly this statement with the same params, call query_database again with confirm: "${issued}" (valid for 5 minutes, once). Ask the user first.`,
          ]
            .filter(Boolean)
            .join('\n\n'),
        },
      ],
      structuredContent: {
        columns: [],
        rows: [],
        rowCount: 0,
        truncated: false,
        nextOffset: null,
        confirmation: {
          nonce: issued,
          estimatedRows: estimatedRows ?? 0,
          plan: explained?.plan ?? null,
        },
      },
    };
  }

  function answer(
    columns: Columns['columns'],
    rows: unknown[][],
    result: PipelineResult,
    offset: number,
  ) {
    const truncated = result.truncatedBy !== null;
    const nextOffset = truncated ? offset + rows.length : null;
    const lines = [`Database: ${db.name}`, ''];
    if (columns.length === 0) {
      lines.push(
        `${result.command ?? 'OK'}${result.rowCount !== null ? ` ${result.rowCount}` : ''}`,
      );
    } else {
      lines.push(
        toTsv(
          columns.map((c) => c.name),
          rows,
        ),
        '',
      );
      const shown = `${rows.length} row${rows.length === 1 ? '' : 's'}`;
      if (nextOffset === null)
        lines.push(offset > 0 ? `${shown} (from offset ${offset}); no more rows.` : `${shown}.`);
      else {
        const why =
          result.truncatedBy === 'bytes'
            ? ` (stopped at the ${limits.maxResultBytes}-byte result cap)`
            : '';
        lines.push(`${shown}${why}; more available — use offset=${nextOffset}.`);
      }
    }
    return {
      content: [{ type: 'text' as const, text: lines.join('\n') }],
      structuredContent: {
        columns,
        rows: rows.map((row) => row.map(jsonValue)),
        rowCount: rows.length,
        truncated,
        nextOffset,
        // A statement without a result set (a write) reports its command tag instead.
        ...(columns.length === 0 ? { command: result.command } : {}),
      },
    };
  }
}
