// Prompts that carry live schema context from the catalog, so the model starts from the
// real tables instead of guessing: explore the database, write a query, diagnose a slow one.
import type { Catalog, CatalogSnapshot, RelationDescriptor } from '../../catalog/index.js';
import { byText } from '../../catalog/index.js';
import type { PromptResult } from '../../core/content.js';
import type { PromptSpec } from '../../core/specs.js';
import { checkStatement, loadSqlParser } from '../sql-guard.js';
import { KIND_LABELS, summarizeSchemas, tableSketch } from '../common/schema-text.js';

export interface PromptDeps {
  catalog: Catalog;
  /** Row cap of query_database, to mention in instructions. */
  maxRows: number;
}

/** More tables than this and a prompt lists schemas instead of tables. */
const MAX_LISTED_TABLES = 150;

const approx = (n: number | null): string =>
  n === null ? 'rows unknown' : `~${n.toLocaleString('en-US')} rows`;

function userMessage(text: string, description: string): PromptResult {
  return { description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}

function listedRelations(snapshot: CatalogSnapshot): RelationDescriptor[] {
  return snapshot.relations.filter((r) => !(r.isPartition && r.parent));
}

function overview(snapshot: CatalogSnapshot): string[] {
  const relations = listedRelations(snapshot);
  if (relations.length === 0) return ['(no tables or views are visible to this connection)'];
  const lines: string[] = [];
  if (relations.length > MAX_LISTED_TABLES) {
    lines.push(`${relations.length} tables and views; by schema:`);
    for (const s of summarizeSchemas(snapshot.schemas, relations)) {
      lines.push(
        `- ${s.schema}: ${s.tables} tables, ${s.views} views${s.description ? ` — ${s.description}` : ''}`,
      );
    }
    return lines;
  }
  for (const schema of snapshot.schemas) {
    const inSchema = relations.filter((r) => r.schema === schema.name);
    if (inSchema.length === 0) continue;
    lines.push(`Schema ${schema.name}${schema.comment ? ` — ${schema.comment}` : ''}`);
    for (const r of inSchema) {
      const facts = [KIND_LABELS[r.kind]];
      if (r.kind !== 'view') facts.push(approx(r.rowEstimate));
      if (r.hasVectors) facts.push('has vector columns');
      lines.push(
        `- ${r.schema}.${r.name} (${facts.join(', ')})${r.comment ? `: ${r.comment}` : ''}`,
      );
    }
    lines.push('');
  }
  return lines;
}

/** `a.b, c` → the relations they name (unqualified names match in every schema). */
function resolveTableList(
  snapshot: CatalogSnapshot,
  list: string,
): { found: RelationDescriptor[]; missing: string[] } {
  const found: RelationDescriptor[] = [];
  const missing: string[] = [];
  for (const raw of list.split(',')) {
    const item = raw.trim();
    if (!item) continue;
    const dot = item.indexOf('.');
    const matches =
      dot > 0
        ? [snapshot.relation(item.slice(0, dot), item.slice(dot + 1))].filter(
            (r): r is RelationDescriptor => r !== undefined,
          )
        : snapshot.relationsNamed(item);
    if (matches.length === 0) missing.push(item);
    for (const r of matches) if (!found.includes(r)) found.push(r);
  }
  return { found, missing };
}

function keysAndIndexes(rel: RelationDescriptor, withIndexes = true): string[] {
  const lines: string[] = [];
  if (rel.primaryKey) lines.push(`  primary key (${rel.primaryKey.columns.join(', ')})`);
  for (const fk of rel.foreignKeys) {
    lines.push(
      `  foreign key (${fk.columns.join(', ')}) → ${fk.references.schema}.${fk.references.table} (${fk.references.columns.join(', ')})`,
    );
  }
  for (const index of withIndexes ? rel.indexes : []) {
    const columns = index.columns.map((c) => c ?? '(expression)').join(', ');
    const flags = [index.method, index.unique ? 'unique' : '', index.partial ? 'partial' : '']
      .filter(Boolean)
      .join(', ');
    lines.push(`  index ${index.name} on (${columns}) [${flags}]`);
  }
  return lines;
}

/** Completion of a comma-separated table list: the last item is completed, the rest kept. */
async function completeTableList(catalog: Catalog, value: string): Promise<string[]> {
  const snapshot = await catalog.snapshot();
  const cut = value.lastIndexOf(',');
  const head = cut === -1 ? '' : `${value.slice(0, cut + 1)} `;
  const last = value
    .slice(cut + 1)
    .trim()
    .toLowerCase();
  const taken = new Set(
    value
      .slice(0, Math.max(cut, 0))
      .split(',')
      .map((s) => s.trim()),
  );
  const names = listedRelations(snapshot)
    .map((r) => `${r.schema}.${r.name}`)
    .filter(
      (q) =>
        !taken.has(q) &&
        (q.toLowerCase().startsWith(last) ||
          q
            .slice(q.indexOf('.') + 1)
            .toLowerCase()
            .startsWith(last)),
    )
    .sort(byText);
  return names.map((q) => `${head}${q}`);
}

export function createBuiltinPrompts(deps: PromptDeps): PromptSpec[] {
  const { catalog } = deps;

  const exploreDatabase: PromptSpec = {
    name: 'explore_database',
    title: 'Explore the database',
    description:
      'Get oriented in this database: its schemas and tables with descriptions and sizes, and how to use the tools to look further.',
    arguments: [],
    async get() {
      const snapshot = await catalog.snapshot();
      const text = [
        `Help me explore the PostgreSQL database "${catalog.databaseName}". This is what it holds (tables and views with their descriptions and approximate row counts):`,
        '',
        ...overview(snapshot),
        'How to look further:',
        '- get_schema_info with schema_name (and table_name) shows columns, types, keys and foreign-key references; compact=true for a shorter listing.',
        `- query_database runs one read-only SELECT (at most ${deps.maxRows} rows per call); pass values as params ($1, $2 …) rather than pasting them into the SQL.`,
        '- count_rows counts the rows of one table, optionally with a filter; execute_explain shows and analyses a query plan.',
        '- The resources pg://schema/{schema} and pg://table/{schema}/{table} describe a schema or a table as JSON (the read_resource tool reads them if your client cannot).',
        '',
        'First describe in a few sentences what this database appears to be for and how its main tables relate, then suggest three questions it could answer, each with the tables it would use.',
      ].join('\n');
      return userMessage(text, `Overview of ${catalog.databaseName} and how to explore it`);
    },
  };

  const writeQuery: PromptSpec = {
    name: 'write_query',
    title: 'Write a SQL query',
    description:
      'Write and run a read-only SQL query for a task, with the relevant tables’ columns and keys (or a schema summary) included.',
    arguments: [
      {
        name: 'task',
        description: 'What the query should answer, in plain words.',
        required: true,
      },
      {
        name: 'tables',
        description:
          'Comma-separated tables to use (schema.table or table); default: all, summarised.',
        required: false,
      },
    ],
    async get(args) {
      const snapshot = await catalog.snapshot();
      const task = args['task'] ?? '';
      const lines = [`Write a PostgreSQL query for this task: ${task}`, ''];
      const list = args['tables']?.trim();
      if (list) {
        const { found, missing } = resolveTableList(snapshot, list);
        if (found.length > 0) {
          lines.push('Tables to use (columns with types and keys):');
          for (const rel of found) {
            lines.push(`- ${tableSketch(rel)}${rel.comment ? ` — ${rel.comment}` : ''}`);
            lines.push(...keysAndIndexes(rel, false));
          }
        }
        if (missing.length > 0) {
          lines.push(`Not found (check the names with get_schema_info): ${missing.join(', ')}.`);
        }
      } else {
        const relations = listedRelations(snapshot);
        if (relations.length <= MAX_LISTED_TABLES) {
          lines.push('The database’s tables (columns with types and keys):');
          for (const rel of relations) lines.push(`- ${tableSketch(rel)}`);
        } else {
          lines.push(...overview(snapshot));
          lines.push(
            'Use get_schema_info with schema_name and table_name to see the columns you need.',
          );
        }
      }
      lines.push(
        '',
        'Then:',
        '- Use only tables and columns that exist (see above, or get_schema_info); join along the foreign keys shown.',
        '- Run the query with query_database. Pass literal values as params ($1, $2 …), never pasted into the SQL text.',
        `- It runs read-only: SELECT (or WITH … SELECT) only. Results are capped at ${deps.maxRows} rows; aggregate or add LIMIT for large tables.`,
        '- If the query is slow, check it with execute_explain.',
        '- Show the SQL you ran and answer the task from its result.',
      );
      return userMessage(lines.join('\n'), `Write a query: ${task}`);
    },
    async complete(argument, value) {
      return { values: argument === 'tables' ? await completeTableList(catalog, value) : [] };
    },
  };

  const diagnoseSlowQuery: PromptSpec = {
    name: 'diagnose_slow_query',
    title: 'Diagnose a slow query',
    description:
      'Find out why a query is slow: the tables it reads with their sizes and indexes, and the steps to analyse its plan with execute_explain.',
    arguments: [{ name: 'query', description: 'The slow SQL statement.', required: true }],
    async get(args) {
      const query = args['query'] ?? '';
      const snapshot = await catalog.snapshot();
      const lines = ['This PostgreSQL query is slow:', '', '```sql', query.trim(), '```', ''];
      await loadSqlParser();
      let relations: RelationDescriptor[] = [];
      try {
        const guard = checkStatement(query, { allowWrites: true, deniedFunctions: [] });
        const ctes = new Set(guard.ctes);
        for (const ref of guard.relations) {
          if (ref.schema === null && ctes.has(ref.name)) continue;
          const matches = ref.schema
            ? [snapshot.relation(ref.schema, ref.name)].filter(
                (r): r is RelationDescriptor => r !== undefined,
              )
            : snapshot.relationsNamed(ref.name);
          for (const r of matches) if (!relations.includes(r)) relations.push(r);
        }
      } catch (error) {
        lines.push(`(The query does not parse: ${(error as Error).message}. Fix that first.)`, '');
      }
      relations = relations.sort((a, b) => byText(a.schema, b.schema) || byText(a.name, b.name));
      if (relations.length > 0) {
        lines.push('Tables it reads:');
        for (const rel of relations) {
          const size = `${approx(rel.rowEstimate)}, ~${Math.round(rel.sizeEstimateBytes / 1024).toLocaleString('en-US')} kB`;
          lines.push(`- ${rel.schema}.${rel.name} (${KIND_LABELS[rel.kind]}, ${size})`);
          const details = keysAndIndexes(rel);
          lines.push(...(details.length > 0 ? details : ['  no keys or indexes']));
        }
        lines.push('');
      }
      lines.push(
        'Diagnose it:',
        '1. Call execute_explain with this query (analyze=false) to see the plan and its estimated cost.',
        '2. If running it is acceptable (it runs read-only, within the statement timeout), call execute_explain again with analyze=true and buffers=true to compare estimated and actual rows and see where the time goes.',
        '3. Read the analysis: sequential scans of large tables, misestimated row counts (stale statistics), sorts or hashes spilling to disk, nested loops with many iterations.',
        '4. Propose concrete fixes — an index (give the CREATE INDEX statement and why it helps), a rewrite of the query, ANALYZE for stale statistics, or a setting such as work_mem — and say which finding each one addresses. Do not run DDL yourself.',
      );
      return userMessage(lines.join('\n'), 'Diagnose a slow query');
    },
  };

  const tuneDatabase: PromptSpec = {
    name: 'tune_database',
    title: 'Tune the database',
    description:
      'Find what makes the database slow and what to do: the top queries, index advice for them (hypothetical indexes), then a health check.',
    async get() {
      const text = [
        `Tune the PostgreSQL database ${catalog.databaseName}. Work through these steps and report what you find at each:`,
        '1. Call get_top_queries with sort_by "total_time" (then "resources") to find the statements that cost the most. If it says pg_stat_statements is missing, tell the user what it says to install and skip to step 4.',
        '2. Call analyze_query_indexes with the SELECT statements among them (up to 10, as shown; placeholders like $1 are fine) — or analyze_workload_indexes to let it read the workload itself. It tries candidate indexes hypothetically (HypoPG) and recommends only those that lower the estimated cost.',
        '3. For a recommendation you want to check, call explain_query with the statement and hypothetical_indexes [{"table": …, "columns": […]}] to see the plan and cost with it.',
        '4. Call analyze_db_health (health_type "all") and list its findings by severity.',
        '5. Summarise: the CREATE INDEX CONCURRENTLY statements worth running (size, queries helped, cost before and after), and the health findings to fix, each with its action. Do not run DDL yourself; the user decides.',
      ].join('\n');
      return userMessage(text, 'Tune the database');
    },
  };

  return [exploreDatabase, writeQuery, diagnoseSlowQuery, tuneDatabase];
}
