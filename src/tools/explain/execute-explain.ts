// execute_explain: EXPLAIN of one SELECT, read-only, with a short analysis in plain words.
// The plan is always fetched as JSON (the analysis reads it); the text format is drawn from
// it, so EXPLAIN ANALYZE runs the query once.
import type pg from 'pg';
import type { Catalog } from '../../catalog/index.js';
import type { ToolSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { AccessPolicy } from '../access-policy.js';
import { looksLikeCredential } from '../credentials.js';
import { checkStatement, loadSqlParser } from '../sql-guard.js';
import {
  analyzePlan,
  renderPlanText,
  type AnalysisOptions,
  type ExplainDocument,
} from './explain-analysis.js';
import { sameTree, tryParse } from '../common/parse-tree.js';
import { checkPolicy } from '../query/query-policy.js';
import { resolveRelations, type ResolvedRelation } from '../query/relation-access.js';
import { positionInQuery } from '../query/sent-text.js';
import {
  invalidInput,
  readOnlyAnnotations,
  replicaReadCall,
  sameLexerAsParser,
} from '../common/support.js';

export interface ExplainDeps {
  db: Database;
  catalog: Catalog;
  policy: AccessPolicy;
  statementTimeoutMs: number;
  deniedFunctions: readonly string[];
  /** Thresholds of the analysis (tests lower them for small tables). */
  analysis?: Omit<AnalysisOptions, 'tableRows'>;
}

const DESCRIPTION = [
  "Show PostgreSQL's execution plan for one SELECT statement (EXPLAIN), with a short analysis: sequential scans of large tables, row-estimate errors, sorts and hashes spilling to disk, nested loops with many iterations, and the total cost and time.",
  'Use it when a query is slow or before running an expensive one; do not use it to fetch data (use query_database).',
  'analyze=true executes the query (in a read-only transaction, within the statement timeout) and reports actual rows and times; buffers=true adds block I/O counts. format=json returns the raw JSON plan instead of the text tree.',
  'Send the statement without the EXPLAIN keyword.',
  'Example: {"query": "SELECT * FROM orders WHERE customer_id = 42 ORDER BY created_at DESC LIMIT 10", "analyze": true}.',
].join(' ');

function explainSql(query: string, analyze: boolean, buffers: boolean): string {
  return `EXPLAIN (FORMAT JSON, ANALYZE ${analyze}, BUFFERS ${buffers}) ${query}`;
}

export function createExecuteExplainTool(deps: ExplainDeps): ToolSpec {
  const { db, catalog, policy } = deps;
  return {
    name: 'execute_explain',
    title: 'Explain a query plan',
    description: DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, description: 'One SELECT statement.' },
        analyze: {
          type: 'boolean',
          default: false,
          description: 'Execute the query and report actual rows and times.',
        },
        buffers: {
          type: 'boolean',
          default: false,
          description: 'Report shared/local/temp block usage.',
        },
        format: {
          type: 'string',
          enum: ['text', 'json'],
          default: 'text',
          description:
            'text: the indented plan tree; json: the plan as EXPLAIN (FORMAT JSON) prints it.',
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        plan: {
          type: 'object',
          description:
            'The plan object: the one element of the array EXPLAIN (FORMAT JSON) prints.',
        },
        findings: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              kind: {
                type: 'string',
                enum: [
                  'seq_scan',
                  'misestimate',
                  'sort_spill',
                  'hash_spill',
                  'nested_loop',
                  'summary',
                ],
              },
              message: { type: 'string' },
              node: { type: ['string', 'null'] },
            },
            required: ['kind', 'message', 'node'],
          },
        },
      },
      required: ['plan', 'findings'],
    },
    annotations: readOnlyAnnotations('Explain a query plan'),
    async call(args, ctx) {
      const query = args['query'] as string;
      const analyze = args['analyze'] === true;
      const buffers = args['buffers'] === true;
      const format = (args['format'] as 'text' | 'json' | undefined) ?? 'text';
      await loadSqlParser();
      // EXPLAIN ANALYZE executes the statement: it is judged like free SQL, and must be a SELECT.
      const guard = checkStatement(query, {
        allowWrites: false,
        deniedFunctions: deps.deniedFunctions,
      });
      if (guard.statement !== 'SelectStmt') {
        throw invalidInput(
          guard.statement === 'ExplainStmt'
            ? 'Send the query without EXPLAIN: execute_explain adds it (use the analyze, buffers and format arguments).'
            : `execute_explain explains SELECT statements only (this is ${guard.statement.replace(/Stmt$/, '')}).`,
        );
      }
      const parsed = tryParse(query);
      const original = parsed.ok ? parsed.tree.stmts?.[0]?.stmt : undefined;
      const sql = explainSql(query, analyze, buffers);
      // The statement we send must mean exactly the statement that was judged.
      const wrapped = tryParse(sql);
      const explained = wrapped.ok
        ? (wrapped.tree.stmts?.[0]?.stmt?.['ExplainStmt'] as { query?: unknown } | undefined)
        : undefined;
      if (
        !wrapped.ok ||
        wrapped.tree.stmts?.length !== 1 ||
        !explained ||
        !sameTree(explained.query, original)
      ) {
        throw invalidInput('Refused: the query does not stay one statement inside EXPLAIN.');
      }

      const snapshot = await catalog.snapshot();
      let relations: ResolvedRelation[] = [];
      const doc = await replicaReadCall(
        db,
        deps.statementTimeoutMs,
        ctx,
        async (client) => {
          relations = await resolveRelations(client, guard.relations);
          // The whole policy, as for query_database: through views and functions, and masked
          // columns in filters (EXPLAIN's row estimates and ANALYZE's counts would answer them).
          const masks = await checkPolicy(client, policy, query, guard);
          // Catalog relations read under a policy are explained as they run: filtered.
          const text = masks.statement ? explainSql(masks.statement, analyze, buffers) : sql;
          await sameLexerAsParser(client);
          const result = await client
            .query({ text, queryMode: 'extended' } as pg.QueryConfig)
            .catch((error: unknown) => {
              // Counted in the caller's query: not in the EXPLAIN around it, nor in the
              // filtered catalog subqueries sent in place of what it wrote.
              throw positionInQuery(error, sql.length - query.length, masks.replacements);
            });
          const value = (result.rows[0] as Record<string, unknown>)['QUERY PLAN'];
          const parsedPlan = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
          return (parsedPlan as ExplainDocument[])[0]!;
        },
        () => query,
      );

      const tableRows = (name: string, schema: string | undefined): number | null => {
        if (schema) return snapshot.relation(schema, name)?.rowEstimate ?? null;
        const used = relations.filter((r) => r.name === name);
        const candidates =
          used.length > 0
            ? used.map((r) => snapshot.relation(r.schema, r.name)).filter((r) => r !== undefined)
            : snapshot.relationsNamed(name);
        return candidates.length === 1 ? (candidates[0]!.rowEstimate ?? null) : null;
      };
      const findings = analyzePlan(doc, { ...deps.analysis, tableRows });
      const planText = format === 'json' ? JSON.stringify([doc], null, 2) : renderPlanText(doc);
      const analysis = findings.map((f) => `- ${f.message}`).join('\n');
      // A plan shows constants and expressions: never one that reads like a credential.
      if (looksLikeCredential(JSON.stringify(doc))) {
        throw new AppError(
          ErrorCodes.CREDENTIALS_REFUSED,
          'Refused: the plan holds a value that reads like a credential (a password hash or a connection string with a password), and pgmcp never returns credentials.',
          { category: 'forbidden' },
        );
      }
      return {
        content: [
          {
            type: 'text',
            text: `Database: ${catalog.databaseName}\n\nQuery plan${analyze ? ' (ANALYZE: the query was executed)' : ''}:\n${planText}\n\nAnalysis:\n${analysis}`,
          },
        ],
        structuredContent: { plan: doc, findings },
      };
    },
  };
}
