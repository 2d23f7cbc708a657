// apply_index_recommendation: create one recommended index, as a write the user confirms (by
// elicitation where the client supports it, else by calling again with the nonce of the
// preview), only where the database allows writes; then the real EXPLAIN of the given queries
// shows whether the planner uses it. The statement is built here from checked names, never
// taken from the caller's text.
import type { ToolSpec } from '../../core/specs.js';
import type { Signer } from '../../core/signed.js';
import type { NonceLedger } from '../../core/used-nonces.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { locateRelation } from '../common/locate.js';
import { notFound, readOnlyCall, sameLexerAsParser } from '../common/support.js';
import { loadSqlParser } from '../sql-guard.js';
import { createWriteConfirmations } from '../query/write-confirmation.js';
import { COLUMNS_SCHEMA, columnsOf, round, tableResult, type DbaDeps } from './deps.js';
import {
  explainCost,
  indexDefinition,
  indexesUsed,
  INDEX_SPEC_PROPERTIES,
  type IndexSpec,
} from './hypothetical.js';
import { prepareStatement } from './statements.js';
import { MAX_QUERIES } from './index-advice.js';

const NAME = 'apply_index_recommendation';

export function createApplyIndexTool(
  deps: DbaDeps & { signer: Signer; allowed: boolean; nonces?: NonceLedger },
): ToolSpec {
  const confirmations = createWriteConfirmations(deps.signer, Date.now, NAME, deps.nonces);
  return {
    name: NAME,
    title: 'Create a recommended index',
    description:
      'Create one index that analyze_query_indexes or analyze_workload_indexes recommended, then show the real EXPLAIN of the queries it should help. A write, only where the database allows writes: it runs only once the user confirms it (the first call returns a preview with a confirm nonce when the client cannot ask the user). It is built with CREATE INDEX (writes to the table wait while it builds, within the statement timeout); for a large, busy table give the user the CREATE INDEX CONCURRENTLY statement to run instead.',
    inputSchema: {
      type: 'object',
      properties: {
        ...INDEX_SPEC_PROPERTIES,
        queries: {
          type: 'array',
          maxItems: MAX_QUERIES,
          default: [],
          items: { type: 'string', minLength: 1 },
          description: 'SELECT statements to EXPLAIN once the index exists.',
        },
        confirm: { type: 'string', description: 'The nonce of the preview, once the user agreed.' },
      },
      required: ['table', 'columns'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        applied: { type: 'boolean' },
        definition: { type: 'string' },
        confirmation: { type: ['object', 'null'] },
        columns: COLUMNS_SCHEMA,
        rows: { type: 'array', items: { type: 'array' } },
      },
      required: ['applied', 'definition', 'confirmation', 'columns', 'rows'],
    },
    annotations: {
      title: 'Create a recommended index',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    async call(args, ctx) {
      const queries = (args['queries'] as string[] | undefined) ?? [];
      const nonce = typeof args['confirm'] === 'string' ? args['confirm'] : null;
      if (!deps.allowed) {
        throw new AppError(
          ErrorCodes.WRITE_NOT_ALLOWED,
          'Not created: this database is read-only for pgmcp (database.allowWrites is false). Give the user the CREATE INDEX CONCURRENTLY statement of the recommendation to run instead.',
          { category: 'input' },
        );
      }
      await loadSqlParser();
      // Names and queries checked first, on a read-only connection released before asking.
      const spec = await readOnlyCall(deps.db, deps.statementTimeoutMs, ctx, async (client) => {
        await sameLexerAsParser(client);
        const table = args['table'] as string;
        const found = await locateRelation(client, undefined, table);
        if (!found || !deps.policy.tableVisible(found.schema, found.name))
          throw notFound(`No table ${table}.`);
        const columns = args['columns'] as string[];
        const { rows } = await client.query<{ name: string }>(
          `SELECT attname AS name FROM pg_catalog.pg_attribute
           WHERE attrelid = pg_catalog.to_regclass($1) AND attnum > 0 AND NOT attisdropped`,
          [`"${found.schema.replace(/"/g, '""')}"."${found.name.replace(/"/g, '""')}"`],
        );
        const existing = new Set(rows.map((r) => r.name));
        for (const c of columns) {
          if (!existing.has(c) || !deps.policy.columnVisible(found.schema, found.name, c)) {
            throw notFound(`No column ${c} in ${table}.`);
          }
        }
        for (const q of queries) await prepareStatement(client, q, deps);
        return {
          schema: found.schema,
          table: found.name,
          columns,
          using: (args['using'] as string | undefined) ?? 'btree',
        } satisfies IndexSpec;
      });
      const definition = indexDefinition(spec);
      const empty = { columns: columnsOf([]), rows: [] };
      if (nonce === null) {
        if (ctx.clientSupports('elicitation')) {
          const { confirm } = await ctx.requestInput({
            confirm: {
              method: 'elicitation/create',
              params: {
                message: `Create this index?\n\n${definition}`,
                requestedSchema: {
                  type: 'object',
                  properties: {
                    run: { type: 'boolean', title: 'Create the index', default: false },
                  },
                  required: ['run'],
                },
              },
            },
          });
          const answer = confirm as { action?: string; content?: { run?: unknown } };
          if (!(answer.action === 'accept' && answer.content?.run === true)) {
            return tableResult(`Not created: the user did not confirm it.\n\n${definition}`, {
              applied: false,
              definition,
              confirmation: null,
              ...empty,
            });
          }
        } else {
          const issued = confirmations.issue(`${NAME}\n${definition}`, []);
          return tableResult(
            `This creates an index; it has NOT run yet.\n\n${definition}\n\nTo create exactly this index, call ${NAME} again with the same arguments and confirm: "${issued}" (valid for 5 minutes, once). Ask the user first.`,
            { applied: false, definition, confirmation: { nonce: issued }, ...empty },
          );
        }
      } else {
        await confirmations.redeem(nonce, `${NAME}\n${definition}`, []);
      }
      await deps.db.withTransaction(
        {
          readOnly: false,
          timeoutMs: deps.statementTimeoutMs,
          principal: ctx.principal,
          signal: ctx.signal,
        },
        (client) => client.query(definition),
      );
      const plans = await readOnlyCall(deps.db, deps.statementTimeoutMs, ctx, async (client) => {
        await sameLexerAsParser(client);
        const out = [];
        for (const q of queries) {
          const prepared = await prepareStatement(client, q, deps);
          const { cost, plan } = await explainCost(client, prepared.explainable);
          out.push([q, round(cost), indexesUsed(plan).join(', ')]);
        }
        return out;
      });
      const text = [
        `Created: ${definition}`,
        ...(plans.length > 0 ? ['', 'EXPLAIN now (estimated cost, indexes used):'] : []),
        ...plans.map((p) => `- ${String(p[1])} [${String(p[2]) || 'no index'}]: ${String(p[0])}`),
      ].join('\n');
      return tableResult(text, {
        applied: true,
        definition,
        confirmation: null,
        columns: columnsOf([
          ['query', 'text'],
          ['cost', 'numeric'],
          ['indexes_used', 'text'],
        ]),
        rows: plans,
      });
    },
  };
}
