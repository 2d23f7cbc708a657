// analyze_db_health: the checks asked for (a comma list, or all), their findings as one table.
// A finding about a table the access policy hides is left out, unnamed.
import type { ToolSpec } from '../../../core/specs.js';
import { invalidInput, readOnlyAnnotations, readOnlyCall } from '../../common/support.js';
import { COLUMNS_SCHEMA, columnsOf, tableResult, type DbaDeps } from '../deps.js';
import { ALL_STATS_ADVICE, readsAllStats } from '../requirements.js';
import { CHECKS, HEALTH_TYPES, type Finding, type HealthType } from './checks.js';

const COLUMNS = columnsOf(
  ['check', 'severity', 'object', 'finding', 'why', 'action'].map(
    (name) => [name, 'text'] as const,
  ),
);

function parseTypes(value: string): HealthType[] {
  const asked = value
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  if (asked.length === 0 || asked.includes('all')) return [...HEALTH_TYPES];
  const unknown = asked.filter((t) => !(HEALTH_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) {
    throw invalidInput(
      `Unknown health_type ${unknown.join(', ')}: use a comma list of ${HEALTH_TYPES.join(', ')}, or all.`,
    );
  }
  return [...new Set(asked)] as HealthType[];
}

export function createAnalyzeDbHealthTool(deps: DbaDeps): ToolSpec {
  return {
    name: 'analyze_db_health',
    title: 'Database health',
    description:
      'Check the database for problems, each with why it matters and what to do. health_type: a comma list of index (invalid, duplicate, unused, bloated indexes), connection (use against max_connections, sessions idle in a transaction), vacuum (dead tuples, stale statistics, transaction-id wraparound), sequence (close to their maximum), replication (slots, standby lag), buffer (cache hit ratios), constraint (NOT VALID constraints), or all (the default).',
    inputSchema: {
      type: 'object',
      properties: {
        health_type: {
          type: 'string',
          default: 'all',
          description: `Comma list of ${HEALTH_TYPES.join(', ')}; or all.`,
        },
      },
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        columns: COLUMNS_SCHEMA,
        rows: { type: 'array', items: { type: 'array', items: { type: ['string', 'null'] } } },
        checked: { type: 'array', items: { type: 'string' } },
        notes: { type: 'array', items: { type: 'string' } },
      },
      required: ['columns', 'rows', 'checked', 'notes'],
    },
    annotations: readOnlyAnnotations('Database health'),
    async call(args, ctx) {
      const types = parseTypes((args['health_type'] as string | undefined) ?? 'all');
      const { findings, allStats } = await readOnlyCall(
        deps.db,
        deps.statementTimeoutMs,
        ctx,
        async (client) => {
          const findings: Finding[] = [];
          for (const type of types) findings.push(...(await CHECKS[type](client)));
          return { findings, allStats: await readsAllStats(client) };
        },
      );
      const shown = findings.filter(
        (f) => f.table === null || deps.policy.tableVisible(f.table.schema, f.table.name),
      );
      const rows = shown.map((f) => [f.check, f.severity, f.object, f.finding, f.why, f.action]);
      const notes = allStats
        ? []
        : [
            ALL_STATS_ADVICE.replace(
              'statements run by other roles are left out',
              "other sessions' activity is not counted",
            ),
          ];
      const lines = [`Database: ${deps.db.name}`, `Checked: ${types.join(', ')}`, ''];
      if (shown.length === 0) lines.push('No problems found.');
      for (const type of types) {
        const own = shown.filter((f) => f.check === type);
        lines.push(`${type}: ${own.length === 0 ? 'ok' : `${own.length} finding(s)`}`);
        for (const f of own)
          lines.push(`- [${f.severity}] ${f.finding} Why: ${f.why} Do: ${f.action}`);
      }
      for (const n of notes) lines.push('', `Note: ${n}`);
      return tableResult(lines.join('\n'), { columns: COLUMNS, rows, checked: types, notes });
    },
  };
}
