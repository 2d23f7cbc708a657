// query_database: run one SQL statement in a read-only transaction (unless the database
// allows writes) with a timeout, a row cap and a byte cap; answer as TSV for the model and
// as structuredContent for programs.
import { AppError, isAppError } from '../../core/errors.js';
import type { ToolSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';
import { jsonValue, toTsv } from '../tsv.js';
import { readRows } from './read-rows.js';
import { typeNames } from './type-names.js';

export interface QueryLimits {
  defaultRows: number;
  maxRows: number;
  maxResultBytes: number;
  statementTimeoutMs: number;
}

export function createQueryDatabaseTool(
  db: Database,
  limits: QueryLimits,
  allowWrites: boolean,
): ToolSpec {
  const description = [
    `Run one SQL statement against the PostgreSQL database and return the rows as tab-separated text (header line first; NULL is an empty field).`,
    allowWrites
      ? 'Writes are allowed on this database.'
      : 'The statement runs in a READ ONLY transaction: INSERT/UPDATE/DELETE/DDL fail.',
    `Use it for questions a SELECT can answer; use get_schema_info first if you do not know the tables.`,
    `At most ${limits.maxRows} rows per call (default ${limits.defaultRows}); when more exist the answer says which offset to ask for next.`,
    `Statements time out after ${limits.statementTimeoutMs} ms. Pass values as params with $1, $2 … placeholders rather than pasting them into the SQL.`,
    `Example: {"query": "SELECT id, name FROM customers WHERE country = $1 ORDER BY id", "params": ["PT"], "limit": 20}`,
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
          default: 0,
          description: 'Rows to skip (for the next page).',
        },
        params: {
          type: 'array',
          description: 'Values for $1, $2 … placeholders.',
          items: { type: ['string', 'number', 'boolean', 'null'] },
        },
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
        const read = await db.withTransaction(
          {
            readOnly: !allowWrites,
            timeoutMs: limits.statementTimeoutMs,
            principal: ctx.principal,
            signal: ctx.signal,
          },
          async (client) => {
            const result = await readRows(client, {
              sql: query,
              params,
              offset,
              limit,
              maxBytes: limits.maxResultBytes,
              signal: ctx.signal,
            });
            const names = await typeNames(
              client,
              result.columns.map((c) => c.typeOid),
            );
            return { ...result, names };
          },
        );
        const columns = read.columns.map((c) => ({
          name: c.name,
          type: read.names.get(c.typeOid) ?? `oid ${c.typeOid}`,
        }));
        const nextOffset = read.truncated ? offset + read.rows.length : null;
        const lines = [`Database: ${db.name}`, ''];
        if (columns.length === 0) {
          lines.push(`${read.command ?? 'OK'}${read.rowCount !== null ? ` ${read.rowCount}` : ''}`);
        } else {
          lines.push(
            toTsv(
              columns.map((c) => c.name),
              read.rows,
            ),
            '',
          );
          const shown = `${read.rows.length} row${read.rows.length === 1 ? '' : 's'}`;
          if (nextOffset === null)
            lines.push(
              offset > 0 ? `${shown} (from offset ${offset}); no more rows.` : `${shown}.`,
            );
          else {
            const why =
              read.truncatedBy === 'bytes'
                ? ` (stopped at the ${limits.maxResultBytes}-byte result cap)`
                : '';
            lines.push(`${shown}${why}; more available — use offset=${nextOffset}.`);
          }
        }
        return {
          content: [{ type: 'text', text: lines.join('\n') }],
          structuredContent: {
            columns,
            rows: read.rows.map((row) => row.map(jsonValue)),
            rowCount: read.rows.length,
            truncated: read.truncated,
            nextOffset,
          },
        };
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
}
