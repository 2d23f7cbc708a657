// Reading an EXPLAIN (FORMAT JSON) plan: a plain-language list of what usually makes a query
// slow, and the plan drawn as PostgreSQL's text format (so ANALYZE runs the query once).

export interface PlanNode {
  'Node Type': string;
  'Parent Relationship'?: string;
  'Subplan Name'?: string;
  'Relation Name'?: string;
  Schema?: string;
  Alias?: string;
  'Index Name'?: string;
  'Join Type'?: string;
  Strategy?: string;
  'Parallel Aware'?: boolean;
  'Startup Cost'?: number;
  'Total Cost'?: number;
  'Plan Rows'?: number;
  'Plan Width'?: number;
  'Actual Startup Time'?: number;
  'Actual Total Time'?: number;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Filter?: string;
  'Rows Removed by Filter'?: number;
  'Sort Key'?: string[];
  'Sort Method'?: string;
  'Sort Space Used'?: number;
  'Sort Space Type'?: string;
  'Hash Batches'?: number;
  'Original Hash Batches'?: number;
  Plans?: PlanNode[];
  [key: string]: unknown;
}

export interface ExplainDocument {
  Plan: PlanNode;
  'Planning Time'?: number;
  'Execution Time'?: number;
  [key: string]: unknown;
}

export type FindingKind =
  'seq_scan' | 'misestimate' | 'sort_spill' | 'hash_spill' | 'nested_loop' | 'summary';

export interface Finding {
  kind: FindingKind;
  message: string;
  /** The plan node it is about, as the text plan names it; null for the whole plan. */
  node: string | null;
}

export interface AnalysisOptions {
  /** Planner row estimate of a table by the name EXPLAIN prints (null when unknown). */
  tableRows(relation: string, schema: string | undefined): number | null;
  /** A sequential scan of a table at least this big is reported (default 10,000 rows). */
  largeTableRows?: number;
  /** Estimated vs actual rows differing this many times is reported (default 10). */
  misestimateFactor?: number;
  /** Nested loops whose inner side runs this often are reported (default 1,000). */
  nestedLoopIterations?: number;
  /** Most findings of one kind (the largest first); default 5. */
  perKind?: number;
}

const fmt = (n: number): string =>
  Number.isInteger(n)
    ? n.toLocaleString('en-US')
    : n.toLocaleString('en-US', { maximumFractionDigits: 2 });

function nodeName(node: PlanNode): string {
  let type = node['Node Type'];
  if (type === 'Aggregate') {
    type =
      { Sorted: 'GroupAggregate', Hashed: 'HashAggregate', Mixed: 'MixedAggregate' }[
        node.Strategy ?? ''
      ] ?? 'Aggregate';
  }
  const join = node['Join Type'];
  if (join && join !== 'Inner') {
    type =
      type === 'Nested Loop' ? `Nested Loop ${join} Join` : type.replace(/ Join$/, ` ${join} Join`);
  }
  if (node['Parallel Aware']) type = `Parallel ${type}`;
  return type;
}

/** The node's header as the text format prints it, e.g. "Index Scan using i on t x". */
export function nodeLabel(node: PlanNode): string {
  let label = nodeName(node);
  if (node['Index Name']) label += ` using ${node['Index Name']}`;
  const relation = node['Relation Name'];
  if (relation) {
    label += ` on ${node.Schema ? `${node.Schema}.` : ''}${relation}`;
    if (node.Alias && node.Alias !== relation) label += ` ${node.Alias}`;
  } else if (node.Alias && /Scan$/.test(node['Node Type'])) label += ` on ${node.Alias}`;
  return label;
}

/** Tables scanned at or below `node`, as EXPLAIN names them. */
function relationsUnder(node: PlanNode): string[] {
  const names: string[] = [];
  walk(node, (n) => {
    const name = n['Relation Name'];
    if (name) {
      const qualified = n.Schema ? `${n.Schema}.${name}` : name;
      if (!names.includes(qualified)) names.push(qualified);
    }
  });
  return names;
}

function walk(node: PlanNode, visit: (node: PlanNode, parent: PlanNode | null) => void): void {
  const go = (n: PlanNode, parent: PlanNode | null): void => {
    visit(n, parent);
    for (const child of n.Plans ?? []) go(child, n);
  };
  go(node, null);
}

export function analyzePlan(doc: ExplainDocument, options: AnalysisOptions): Finding[] {
  const large = options.largeTableRows ?? 10_000;
  const factor = options.misestimateFactor ?? 10;
  const loopsLimit = options.nestedLoopIterations ?? 1_000;
  const perKind = options.perKind ?? 5;
  const analyzed = doc.Plan['Actual Loops'] !== undefined;
  const found: Array<Finding & { weight: number; source: PlanNode }> = [];
  // Misestimates propagate upwards: only the lowest node of a chain is worth naming.
  const misjudged = new Map<PlanNode, 'more' | 'fewer'>();

  walk(doc.Plan, (node) => {
    const label = nodeLabel(node);
    const type = node['Node Type'];
    const loops = node['Actual Loops'] ?? 0;
    const executed = !analyzed || loops > 0;

    if (type === 'Seq Scan' && node['Relation Name']) {
      const estimate = options.tableRows(node['Relation Name'], node.Schema);
      // Without statistics, what the scan read (analyzed) or is expected to return.
      const seen =
        analyzed && executed
          ? (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)
          : (node['Plan Rows'] ?? 0);
      const tableRows = estimate ?? seen;
      if (tableRows >= large) {
        const kept = analyzed ? (node['Actual Rows'] ?? 0) : (node['Plan Rows'] ?? 0);
        const what = node.Filter
          ? `with Filter ${node.Filter} keeps ${analyzed ? '' : '~'}${fmt(kept)} row${kept === 1 ? '' : 's'}` +
            (kept < tableRows / 10
              ? '; an index on the filtered column(s) would let PostgreSQL skip the rest'
              : '')
          : 'without a filter: it reads the whole table (fine when you need every row; otherwise add a selective WHERE or LIMIT)';
        found.push({
          kind: 'seq_scan',
          message: `Sequential scan on ${node.Schema ? `${node.Schema}.` : ''}${node['Relation Name']} (~${fmt(tableRows)} rows) ${what}.`,
          node: label,
          weight: tableRows,
          source: node,
        });
      }
    }

    if (
      analyzed &&
      executed &&
      node['Plan Rows'] !== undefined &&
      node['Actual Rows'] !== undefined
    ) {
      const estimated = node['Plan Rows'];
      const actual = node['Actual Rows'];
      const hi = Math.max(estimated, actual);
      const ratio = hi / Math.max(1, Math.min(estimated, actual));
      if (ratio >= factor && hi >= 100) {
        const direction = actual > estimated ? 'more' : 'fewer';
        misjudged.set(node, direction);
        const tables = relationsUnder(node);
        found.push({
          kind: 'misestimate',
          message: `${label}: estimated ${fmt(estimated)} rows, actually ${fmt(actual)}${loops > 1 ? ' per loop' : ''} (${fmt(Math.round(ratio))}× ${direction}). Stale or missing statistics mislead the planner: run ANALYZE${tables.length > 0 ? ` on ${tables.join(', ')}` : ' on the tables involved'}, or add extended statistics (CREATE STATISTICS) for correlated columns.`,
          node: label,
          weight: ratio,
          source: node,
        });
      }
    }

    const sortMethod = node['Sort Method'];
    if (
      type.endsWith('Sort') &&
      (node['Sort Space Type'] === 'Disk' || (sortMethod ?? '').startsWith('external'))
    ) {
      const used = node['Sort Space Used'];
      found.push({
        kind: 'sort_spill',
        message: `${label} spilled to disk (${sortMethod ?? 'external'}${used !== undefined ? `, ${fmt(used)} kB` : ''}${node['Sort Key'] ? ` on ${node['Sort Key'].join(', ')}` : ''}). Raise work_mem for this query, sort fewer rows (filter first, LIMIT), or add an index that returns rows in this order.`,
        node: label,
        weight: used ?? 1,
        source: node,
      });
    }

    const batches = node['Hash Batches'];
    if (type === 'Hash' && batches !== undefined && batches > 1) {
      found.push({
        kind: 'hash_spill',
        message: `${label} needed ${fmt(batches)} batches (${batches > (node['Original Hash Batches'] ?? batches) ? 'more than planned; ' : ''}spilled to disk). Raise work_mem or hash a smaller input.`,
        node: label,
        weight: batches,
        source: node,
      });
    }

    if (type === 'Nested Loop' && node.Plans && node.Plans.length >= 2) {
      const [outer, inner] = node.Plans as [PlanNode, PlanNode];
      const iterations = analyzed ? (inner['Actual Loops'] ?? 0) : (outer['Plan Rows'] ?? 0);
      if (iterations >= loopsLimit) {
        const innerLabel = nodeLabel(inner);
        const indexed = /Index|Memoize|Result/.test(inner['Node Type']);
        found.push({
          kind: 'nested_loop',
          message: `${label} runs its inner side (${innerLabel}) ${analyzed ? '' : '~'}${fmt(iterations)} times${indexed ? '' : ' and that side is not an index lookup'}. ${indexed ? 'Fine when each lookup is cheap; if it is slow, check the row estimates (ANALYZE) — a hash or merge join may be better.' : 'Add an index on the join column of the inner table, or check the row estimates (ANALYZE) so the planner picks a hash join.'}`,
          node: label,
          weight: iterations,
          source: node,
        });
      }
    }
  });

  const findings: Finding[] = [];
  const kinds: FindingKind[] = [
    'seq_scan',
    'misestimate',
    'sort_spill',
    'hash_spill',
    'nested_loop',
  ];
  const inherited = (f: (typeof found)[number]): boolean =>
    f.kind === 'misestimate' &&
    (f.source.Plans ?? []).some((child) => misjudged.get(child) === misjudged.get(f.source));
  for (const kind of kinds) {
    found
      .filter((f) => f.kind === kind && !inherited(f))
      .sort((a, b) => b.weight - a.weight)
      .slice(0, perKind)
      .forEach(({ kind: k, message, node }) => findings.push({ kind: k, message, node }));
  }

  const top = doc.Plan;
  const parts = [
    `Total estimated cost ${fmt(top['Total Cost'] ?? 0)} for ~${fmt(top['Plan Rows'] ?? 0)} rows`,
  ];
  if (analyzed) parts.push(`actual ${fmt(top['Actual Rows'] ?? 0)} rows`);
  if (doc['Planning Time'] !== undefined) parts.push(`planning ${fmt(doc['Planning Time'])} ms`);
  if (doc['Execution Time'] !== undefined) parts.push(`execution ${fmt(doc['Execution Time'])} ms`);
  const verdict =
    findings.length === 0
      ? analyzed
        ? ' Nothing in the plan stands out.'
        : ' Nothing in the plan stands out (run with analyze=true to compare estimates with reality).'
      : '';
  findings.push({
    kind: 'summary',
    message: `${parts.join('; ')}.${verdict}`,
    node: nodeLabel(top),
  });
  return findings;
}

// ---------------------------------------------------------------------------------------------
// Text rendering

const DETAIL_KEYS: Array<[string, string]> = [
  ['Hash Cond', 'Hash Cond'],
  ['Merge Cond', 'Merge Cond'],
  ['Index Cond', 'Index Cond'],
  ['Recheck Cond', 'Recheck Cond'],
  ['Join Filter', 'Join Filter'],
  ['Rows Removed by Join Filter', 'Rows Removed by Join Filter'],
  ['Filter', 'Filter'],
  ['Rows Removed by Filter', 'Rows Removed by Filter'],
  ['Rows Removed by Index Recheck', 'Rows Removed by Index Recheck'],
  ['Sort Key', 'Sort Key'],
  ['Group Key', 'Group Key'],
  ['Presorted Key', 'Presorted Key'],
  ['Cache Key', 'Cache Key'],
  ['Heap Fetches', 'Heap Fetches'],
  ['One-Time Filter', 'One-Time Filter'],
  ['Workers Planned', 'Workers Planned'],
  ['Workers Launched', 'Workers Launched'],
];

function costs(node: PlanNode): string {
  let text = '';
  if (node['Total Cost'] !== undefined) {
    text += `  (cost=${(node['Startup Cost'] ?? 0).toFixed(2)}..${node['Total Cost'].toFixed(2)} rows=${node['Plan Rows'] ?? 0} width=${node['Plan Width'] ?? 0})`;
  }
  if (node['Actual Loops'] !== undefined) {
    text +=
      node['Actual Loops'] === 0
        ? ' (never executed)'
        : ` (actual time=${(node['Actual Startup Time'] ?? 0).toFixed(3)}..${(node['Actual Total Time'] ?? 0).toFixed(3)} rows=${node['Actual Rows'] ?? 0} loops=${node['Actual Loops']})`;
  }
  return text;
}

function details(node: PlanNode): string[] {
  const lines: string[] = [];
  for (const [key, title] of DETAIL_KEYS) {
    const value = node[key];
    if (value === undefined || value === null) continue;
    if (key.startsWith('Rows Removed') && value === 0) continue;
    lines.push(`${title}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  }
  if (node['Sort Method']) {
    lines.push(
      `Sort Method: ${node['Sort Method']}  ${node['Sort Space Type'] === 'Disk' ? 'Disk' : 'Memory'}: ${node['Sort Space Used'] ?? 0}kB`,
    );
  }
  if (node['Hash Buckets'] !== undefined) {
    lines.push(
      `Buckets: ${String(node['Hash Buckets'])}  Batches: ${String(node['Hash Batches'] ?? 1)}  Memory Usage: ${String(node['Peak Memory Usage'] ?? 0)}kB`,
    );
  }
  const buffers: string[] = [];
  for (const scope of ['Shared', 'Local', 'Temp'] as const) {
    const parts: string[] = [];
    for (const what of ['Hit', 'Read', 'Dirtied', 'Written'] as const) {
      const value = node[`${scope} ${what} Blocks`];
      if (typeof value === 'number' && value > 0) parts.push(`${what.toLowerCase()}=${value}`);
    }
    if (parts.length > 0) buffers.push(`${scope.toLowerCase()} ${parts.join(' ')}`);
  }
  if (buffers.length > 0) lines.push(`Buffers: ${buffers.join(', ')}`);
  return lines;
}

/** The plan in PostgreSQL's text layout (close to EXPLAIN's own; not byte-identical). */
export function renderPlanText(doc: ExplainDocument): string {
  const lines: string[] = [];
  const render = (node: PlanNode, depth: number): void => {
    // PostgreSQL: children at 2 + 6·(depth-1) spaces before "->  ", details 6 further in.
    const pad = depth === 0 ? '' : ' '.repeat(2 + (depth - 1) * 6);
    const relationship = node['Parent Relationship'];
    if (
      depth > 0 &&
      (relationship === 'InitPlan' || relationship === 'SubPlan') &&
      node['Subplan Name']
    ) {
      lines.push(`${pad}${node['Subplan Name']}`);
    }
    const arrow = depth === 0 ? '' : '->  ';
    lines.push(`${pad}${arrow}${nodeLabel(node)}${costs(node)}`);
    const detailPad = depth === 0 ? '  ' : `${pad}      `;
    for (const line of details(node)) lines.push(`${detailPad}${line}`);
    for (const child of node.Plans ?? []) render(child, depth + 1);
  };
  render(doc.Plan, 0);
  if (doc['Planning Time'] !== undefined)
    lines.push(`Planning Time: ${doc['Planning Time'].toFixed(3)} ms`);
  if (doc['Execution Time'] !== undefined)
    lines.push(`Execution Time: ${doc['Execution Time'].toFixed(3)} ms`);
  return lines.join('\n');
}
