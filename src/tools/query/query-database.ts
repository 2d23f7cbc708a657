// query_database: one SQL statement, answered in stages, each timed (ctx.timing):
//   parse   — PostgreSQL's own parser judges it (sql-guard);
//   policy  — the access policy checks the relations and columns it uses (query-policy);
//   plan    — the planner's estimate against the cost limits, or for a write's preview (query-plan);
//   confirm — a write runs only once confirmed (query-confirm);
//   run     — in one round trip, READ ONLY unless the database allows writes, with a timeout, a
//             row cap and a byte cap;
//   format  — TSV for the model, structuredContent for programs (query-format).
// Every lookup runs on the call's own connection, under the call's role and identity.
import { AppError, ErrorCodes, isAppError } from '../../core/errors.js';
import type { ToolResult } from '../../core/content.js';
import type { Signer } from '../../core/signed.js';
import type { NonceLedger } from '../../core/used-nonces.js';
import type { CallContext, ToolSpec } from '../../core/specs.js';
import { inSpan } from '../../core/tracing.js';
import type { CallSession } from '../../db/call-session.js';
import type { Database, TransactionOptions } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';
import type { AccessPolicy } from '../access-policy.js';
import { screenError } from '../output-screen.js';
import { checkStatement, loadSqlParser } from '../sql-guard.js';
import { createCredentialScreen, type ScreenLogger } from './credential-screen.js';
import { confirmWrite } from './query-confirm.js';
import { formatResult } from './query-format.js';
import type { PolicyCache } from './policy-cache.js';
import { checkPolicy, checkPolicyCached, type Masks } from './query-policy.js';
import { checkPlanCost, estimatePlan, type PlanLimits } from './query-plan.js';
import { positionInQuery } from './sent-text.js';
import { createWriteConfirmations, type WriteConfirmations } from './write-confirmation.js';

export interface QueryLimits {
  defaultRows: number;
  maxRows: number;
  maxResultBytes: number;
  statementTimeoutMs: number;
}

export interface QueryDatabaseOptions extends PlanLimits {
  limits: QueryLimits;
  allowWrites: boolean;
  deniedFunctions: readonly string[];
  policy: AccessPolicy;
  /** Seals write-confirmation nonces. */
  signer: Signer;
  /** Where a redeemed nonce is recorded for the other instances too (default: here only). */
  nonces?: NonceLedger;
  /** The policy's catalog lookups kept between calls (reads under an active policy). */
  policyCache?: PolicyCache | null;
  /** The server log: where the credential screen says it fell back to the output screen. */
  logger?: ScreenLogger;
}

export type QueryStage = 'parse' | 'policy' | 'plan' | 'confirm' | 'run' | 'format';

/** Runs one stage (a span of its own when tracing) and reports its duration, whether it succeeded or threw. */
function stageTimer(ctx: CallContext) {
  return <T>(stage: QueryStage, work: () => T | Promise<T>): Promise<T> =>
    inSpan(stage, { 'pgmcp.stage': stage }, async () => {
      const started = performance.now();
      try {
        return await work();
      } finally {
        ctx.timing?.(stage, performance.now() - started);
      }
    });
}

/** Rethrows a database error with its position counted in the caller's text, not the one sent. */
const inCallerText =
  (masks: Masks) =>
  (error: unknown): never => {
    throw positionInQuery(error, 0, masks.replacements);
  };

export function createQueryDatabaseTool(db: Database, options: QueryDatabaseOptions): ToolSpec {
  const { limits, allowWrites, policy } = options;
  const cache = policy.active ? (options.policyCache ?? null) : null;
  const confirmations: WriteConfirmations = createWriteConfirmations(
    options.signer,
    Date.now,
    'query_database',
    options.nonces,
  );
  const screen = createCredentialScreen(options.logger ? { logger: options.logger } : {});

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
        valuesCut: {
          type: 'boolean',
          description:
            'Present (true) when a row alone was over the byte cap: its long values are cut, marked "[cut: n of m characters]".',
        },
        nextOffset: { type: ['integer', 'null'] },
        command: { type: ['string', 'null'] },
        rowsAffected: {
          type: ['integer', 'null'],
          description:
            'Present when a write ran: the rows its INSERT, UPDATE, DELETE or MERGE wrote (rowCount counts the rows returned); null for other writes.',
        },
        confirmation: {
          type: 'object',
          description: 'Present when a write was previewed instead of run.',
          properties: {
            nonce: { type: 'string' },
            estimatedRows: {
              type: ['number', 'null'],
              description:
                "The planner's estimate of the rows the statement writes; null when it has none.",
            },
            plan: {},
          },
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
      const nonce = typeof args['confirm'] === 'string' ? args['confirm'] : null;
      const stage = stageTimer(ctx);
      // A read (not a write's confirmation step) may run on a read replica.
      const tx = (readOnly: boolean, replicaOk = false): TransactionOptions => ({
        readOnly,
        replicaOk,
        timeoutMs: limits.statementTimeoutMs,
        principal: ctx.principal,
        signal: ctx.signal,
      });
      /** The last two stages, on the connection of the session given. */
      const runAndFormat = async (
        session: CallSession,
        masks: Masks,
        writes = false,
      ): Promise<ToolResult> => {
        const result = await stage('run', () =>
          session
            .run(
              { text: masks.statement ?? query, values: params },
              { offset, limit, maxBytes: limits.maxResultBytes },
            )
            .catch(inCallerText(masks)),
        );
        // A write may have created a view or function that reads credentials.
        if (writes) {
          screen.invalidate();
          cache?.invalidate();
        }
        return stage('format', () =>
          formatResult(session, result, masks, {
            database: db.name,
            offset,
            maxResultBytes: limits.maxResultBytes,
            writes,
          }),
        );
      };
      try {
        const guard = await stage('parse', async () => {
          await loadSqlParser(); // loaded once, at the first statement
          return checkStatement(query, { allowWrites, deniedFunctions: options.deniedFunctions });
        });
        if (guard.params !== null && params.length !== guard.params)
          throw paramsMismatch(guard.params, params.length);
        const readOnly = guard.kind === 'read' || !allowWrites;
        if (guard.kind === 'write' && nonce === null) {
          // A write not yet confirmed: the policy and the estimate on a read-only connection,
          // released before the user is asked; a confirmed write then runs on a fresh one.
          const { masks, plan } = await db.withCall(tx(true), async (session) => {
            const masks = await stage('policy', () =>
              checkPolicy(session, policy, query, guard, screen),
            );
            const plan = await stage('plan', () =>
              estimatePlan(session, masks.statement ?? query, params, true).catch(() => null),
            );
            return { masks, plan };
          });
          const preview = await stage('confirm', () =>
            confirmWrite(ctx, confirmations, query, params, plan),
          );
          if (preview) return preview;
          return await db.withCall(tx(readOnly), (session) => runAndFormat(session, masks, true));
        }
        // A call whose remembered policy lookups turn out stale (or whose cache step failed)
        // runs once more without the cache; its statement never ran the first time.
        let again = false;
        const attempt = (cached: boolean): Promise<ToolResult> =>
          db.withCall(tx(readOnly, guard.kind === 'read'), async (session) => {
            const call = cached ? cache!.open(session) : null;
            try {
              const masks = await stage('policy', () =>
                call
                  ? checkPolicyCached(call, session, policy, query, guard)
                  : checkPolicy(session, policy, query, guard, screen),
              );
              // The check that the catalog has not changed goes ahead of the caller's SQL.
              call?.guard();
              await stage('plan', () =>
                guard.kind === 'read'
                  ? checkPlanCost(session, options, masks.statement ?? query, params, guard).catch(
                      inCallerText(masks),
                    )
                  : undefined,
              );
              await stage('confirm', async () => {
                // throws when wrong, used or expired
                if (guard.kind === 'write' && nonce !== null)
                  await confirmations.redeem(nonce, query, params);
              });
              return await runAndFormat(session, masks, guard.kind === 'write');
            } catch (error) {
              again = call !== null && (call.failed || session.precedingFailed);
              throw error;
            }
          });
        try {
          return await attempt(cache !== null && cache.available && guard.kind === 'read');
        } catch (error) {
          if (!again) throw error;
          cache!.invalidate();
          return await attempt(false);
        }
      } catch (error) {
        if (isAppError(error) && error.category !== 'internal') {
          // A function's RAISE can carry a value the output screen would have withheld.
          throw screenError(
            new AppError(error.code, describeDbError(error, query), {
              category: error.category,
              details: error.details,
              cause: error,
            }),
          );
        }
        throw error;
      }
    },
  };
}

/** PostgreSQL wants exactly one value per placeholder: said before a round trip is spent. */
function paramsMismatch(needed: number, given: number): AppError {
  const message =
    needed === 0
      ? `The query has no $1, $2 … placeholders, but params has ${given} value${given === 1 ? '' : 's'}: leave params out, or use the placeholders in the query.`
      : `The query uses placeholders up to $${needed}, so params needs ${needed} value${needed === 1 ? '' : 's'} ($1 is params[0]); it has ${given}.`;
  return new AppError(ErrorCodes.TOOL_INPUT_INVALID, message, {
    category: 'input',
    details: { placeholders: needed, params: given },
  });
}
