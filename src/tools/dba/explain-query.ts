// explain_query: execute_explain under the name and argument shape DBA agents know, plus
// hypothetical indexes: with them, the plan is the one PostgreSQL would choose if those indexes
// existed (HypoPG, in the call's own session, gone when the call ends), beside the plan and
// cost without them.
import type { Catalog } from '../../catalog/index.js';
import type { ToolSpec } from '../../core/specs.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { looksLikeCredential } from '../credentials.js';
import {
  notFound,
  invalidInput,
  readOnlyAnnotations,
  readOnlyCall,
  sameLexerAsParser,
} from '../common/support.js';
import { locateRelation } from '../common/locate.js';
import { loadSqlParser } from '../sql-guard.js';
import { createExecuteExplainTool } from '../explain/execute-explain.js';
import { analyzePlan, renderPlanText, type ExplainDocument } from '../explain/explain-analysis.js';
import { round, tableResult, type DbaDeps } from './deps.js';
import {
  explainCost,
  indexDefinition,
  withHypo,
  INDEX_SPEC_PROPERTIES,
  type IndexSpec,
} from './hypothetical.js';
import { requireHypopg } from './requirements.js';
import { prepareStatement } from './statements.js';

const FINDINGS = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      kind: { type: 'string' },
      message: { type: 'string' },
      node: { type: ['string', 'null'] },
    },
    required: ['kind', 'message', 'node'],
  },
};

export function createExplainQueryTool(deps: DbaDeps & { catalog: Catalog }): ToolSpec {
  const plain = createExecuteExplainTool(deps);
  return {
    name: 'explain_query',
    title: 'Explain a query, with hypothetical indexes',
    description:
      'Show the execution plan of one SELECT with a short analysis in plain words (as execute_explain). analyze=true executes it read-only for actual rows and times. hypothetical_indexes (HypoPG; not with analyze) shows the plan PostgreSQL would choose if those indexes existed, with the estimated cost before and after; nothing is created. Example: {"sql": "SELECT * FROM orders WHERE customer_id = 42", "hypothetical_indexes": [{"table": "orders", "columns": ["customer_id"]}]}.',
    inputSchema: {
      type: 'object',
      properties: {
        sql: {
          type: 'string',
          minLength: 1,
          description: 'One SELECT statement, without EXPLAIN.',
        },
        analyze: {
          type: 'boolean',
          default: false,
          description: 'Execute the query (read-only) and report actual rows and times.',
        },
        hypothetical_indexes: {
          type: 'array',
          default: [],
          maxItems: 10,
          items: {
            type: 'object',
            properties: {
              ...INDEX_SPEC_PROPERTIES,
            },
            required: ['table', 'columns'],
            additionalProperties: false,
          },
          description:
            'Indexes to simulate: [{"table": "users", "columns": ["email"], "using": "btree"}].',
        },
      },
      required: ['sql'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        plan: { type: 'object' },
        findings: FINDINGS,
        cost_before: { type: ['number', 'null'] },
        cost_after: { type: ['number', 'null'] },
        hypothetical_indexes: { type: 'array', items: { type: 'string' } },
      },
      required: ['plan', 'findings', 'cost_before', 'cost_after', 'hypothetical_indexes'],
    },
    annotations: readOnlyAnnotations('Explain a query, with hypothetical indexes'),
    async call(args, ctx) {
      const sql = args['sql'] as string;
      const analyze = args['analyze'] === true;
      const wanted =
        (args['hypothetical_indexes'] as
          { table: string; columns: string[]; using?: string }[] | undefined) ?? [];
      if (wanted.length === 0) {
        const result = await plain.call({ query: sql, analyze }, ctx);
        const structured = result.structuredContent as
          { plan: { Plan?: { 'Total Cost'?: number } } } | undefined;
        if (!structured) return result;
        const cost = structured.plan.Plan?.['Total Cost'] ?? null;
        return {
          ...result,
          structuredContent: {
            ...structured,
            cost_before: cost,
            cost_after: cost,
            hypothetical_indexes: [],
          },
        };
      }
      if (analyze) {
        throw invalidInput(
          'analyze cannot be combined with hypothetical_indexes: a hypothetical index exists only for the planner, never for a run. Leave analyze false.',
        );
      }
      await loadSqlParser();
      const snapshot = await deps.catalog.snapshot();
      const outcome = await readOnlyCall(
        deps.db,
        deps.statementTimeoutMs,
        ctx,
        async (client) => {
          await sameLexerAsParser(client);
          const hypopg = await requireHypopg(client);
          const prepared = await prepareStatement(client, sql, deps);
          const specs: IndexSpec[] = [];
          for (const w of wanted) {
            const found = await locateRelation(client, undefined, w.table);
            if (!found || !deps.policy.tableVisible(found.schema, found.name)) {
              throw notFound(`No table ${w.table} (hypothetical_indexes).`);
            }
            for (const c of w.columns) {
              if (!deps.policy.columnVisible(found.schema, found.name, c))
                throw notFound(`No column ${c} in ${w.table}.`);
            }
            specs.push({
              schema: found.schema,
              table: found.name,
              columns: w.columns,
              using: w.using ?? 'btree',
            });
          }
          const before = await explainCost(client, prepared.explainable);
          const after = await withHypo(client, hypopg, async (hypo) => {
            for (const s of specs) await hypo.create(s);
            return explainCost(client, prepared.explainable);
          });
          return { before, after, specs };
        },
        () => sql,
      );
      const doc = outcome.after.plan as unknown as ExplainDocument;
      // A plan shows constants and expressions: never one that reads like a credential.
      if (looksLikeCredential(JSON.stringify(doc))) {
        throw new AppError(
          ErrorCodes.CREDENTIALS_REFUSED,
          'Refused: the plan holds a value that reads like a credential (a password hash or a connection string with a password), and pgmcp never returns credentials.',
          { category: 'forbidden' },
        );
      }
      const tableRows = (name: string, schema: string | undefined): number | null => {
        const found = schema ? [snapshot.relation(schema, name)] : snapshot.relationsNamed(name);
        const list = found.filter((r) => r !== undefined);
        return list.length === 1 ? (list[0]!.rowEstimate ?? null) : null;
      };
      const findings = analyzePlan(doc, { tableRows });
      const definitions = outcome.specs.map((s) => indexDefinition(s));
      const text = [
        `Database: ${deps.db.name}`,
        '',
        `Hypothetical indexes (HypoPG; not created):\n${definitions.map((d) => `- ${d}`).join('\n')}`,
        '',
        `Estimated cost: ${round(outcome.before.cost)} without them → ${round(outcome.after.cost)} with them.`,
        '',
        `Query plan with them:\n${renderPlanText(doc)}`,
        '',
        `Analysis:\n${findings.map((f) => `- ${f.message}`).join('\n')}`,
      ].join('\n');
      return tableResult(text, {
        plan: doc,
        findings,
        cost_before: round(outcome.before.cost),
        cost_after: round(outcome.after.cost),
        hypothetical_indexes: definitions,
      });
    },
  };
}
