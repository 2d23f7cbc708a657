// An EXPLAIN plan as a tree: each node's label as PostgreSQL's text format prints it (the same
// function the analysis names nodes with), its estimated cost and rows, the actual time and rows
// when the plan was run, a bar for its share of the time (or of the cost), and the analysis's
// findings marked on the nodes they are about.
import { useState, useSyncExternalStore } from 'react';
import {
  nodeLabel,
  type ExplainDocument,
  type Finding,
  type PlanNode,
} from '../../../src/tools/explain/explain-analysis';
import { formatNumber } from '../../src/lib/chart-shape';
import { textOf } from './host-link';
import type { createHostStore } from './host-store';

interface PlanResult {
  plan: ExplainDocument;
  findings: Finding[];
  cost_before?: number | null;
  cost_after?: number | null;
  hypothetical_indexes?: string[];
}

function asPlanResult(value: unknown): PlanResult | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const plan = v['plan'] as ExplainDocument | undefined;
  if (!plan || typeof plan !== 'object' || !plan.Plan) return null;
  return {
    ...(v as object),
    plan,
    findings: Array.isArray(v['findings']) ? v['findings'] : [],
  } as PlanResult;
}

const DETAILS = [
  'Index Cond',
  'Recheck Cond',
  'Hash Cond',
  'Merge Cond',
  'Join Filter',
  'Filter',
  'Rows Removed by Filter',
  'Sort Key',
  'Sort Method',
  'Group Key',
  'Output',
] as const;

const ms = (n: number): string => `${n < 10 ? n.toFixed(3) : n.toFixed(1)} ms`;

/** A node's own time: its total for every loop, less its children's (what the bar shows). */
function selfTime(node: PlanNode): number | null {
  const total = node['Actual Total Time'];
  if (total === undefined) return null;
  const loops = node['Actual Loops'] ?? 1;
  const children = (node.Plans ?? []).reduce(
    (sum, child) => sum + (child['Actual Total Time'] ?? 0) * (child['Actual Loops'] ?? 1),
    0,
  );
  return Math.max(0, total * loops - children);
}

export function PlanApp({ store }: { store: ReturnType<typeof createHostStore> }) {
  const host = useSyncExternalStore(store.subscribe, store.get);
  if (!host.result) {
    return (
      <p className="muted">
        {host.cancelled ? `Cancelled: ${host.cancelled}` : 'Waiting for the plan…'}
      </p>
    );
  }
  if (host.result.isError) return <p className="error-text">{textOf(host.result)}</p>;
  const result = asPlanResult(host.result.structuredContent);
  if (!result) return <pre className="tool-text">{textOf(host.result)}</pre>;
  const root = result.plan.Plan;
  const analyzed = root['Actual Total Time'] !== undefined;
  const whole = analyzed ? selfTimeTotal(root) || 1 : root['Total Cost'] || 1;
  const byNode = new Map<string, Finding[]>();
  // The summary is about the whole plan, whatever node it names.
  for (const f of result.findings) {
    if (f.node !== null && f.kind !== 'summary')
      byNode.set(f.node, [...(byNode.get(f.node) ?? []), f]);
  }
  const summary = [
    `Total cost ${formatNumber(root['Total Cost'] ?? 0)}`,
    result.plan['Planning Time'] !== undefined
      ? `planning ${ms(result.plan['Planning Time'])}`
      : null,
    result.plan['Execution Time'] !== undefined
      ? `execution ${ms(result.plan['Execution Time'])}`
      : null,
    typeof result.cost_after === 'number' && typeof result.cost_before === 'number'
      ? `with the hypothetical indexes ${formatNumber(result.cost_before)} → ${formatNumber(result.cost_after)}`
      : null,
  ].filter(Boolean);
  return (
    <section className="plan-view">
      <header className="bar">
        <span className="count">{summary.join(' · ')}</span>
      </header>
      {result.findings.length > 0 ? (
        <ul className="findings" aria-label="Findings">
          {result.findings.map((f, i) => (
            <li key={i} className={`finding ${f.kind}`}>
              {f.message}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">The analysis found nothing to point out.</p>
      )}
      <ul className="plan-tree" role="tree" aria-label="Plan">
        <PlanItem node={root} whole={whole} analyzed={analyzed} byNode={byNode} />
      </ul>
    </section>
  );
}

function selfTimeTotal(node: PlanNode): number {
  return (selfTime(node) ?? 0) + (node.Plans ?? []).reduce((s, c) => s + selfTimeTotal(c), 0);
}

interface ItemProps {
  node: PlanNode;
  whole: number;
  analyzed: boolean;
  byNode: Map<string, Finding[]>;
}

function PlanItem({ node, whole, analyzed, byNode }: ItemProps) {
  const [open, setOpen] = useState(true);
  const label = nodeLabel(node);
  const flagged = byNode.get(label) ?? [];
  const children = node.Plans ?? [];
  const share = analyzed
    ? (selfTime(node) ?? 0) / whole
    : ((node['Total Cost'] ?? 0) - children.reduce((s, c) => s + (c['Total Cost'] ?? 0), 0)) /
      whole;
  const percent = Math.max(0, Math.min(100, share * 100));
  const estimate = `cost ${formatNumber(node['Startup Cost'] ?? 0)}..${formatNumber(node['Total Cost'] ?? 0)}, ${formatNumber(node['Plan Rows'] ?? 0)} rows est.`;
  const actual = analyzed
    ? `${ms(node['Actual Total Time'] ?? 0)}, ${formatNumber(node['Actual Rows'] ?? 0)} rows${(node['Actual Loops'] ?? 1) > 1 ? ` × ${formatNumber(node['Actual Loops'] ?? 1)} loops` : ''}`
    : null;
  const details = DETAILS.filter((key) => node[key] !== undefined).map((key) => {
    const value = node[key];
    return `${key}: ${Array.isArray(value) ? value.join(', ') : String(value)}`;
  });
  return (
    <li
      role="treeitem"
      aria-expanded={children.length > 0 ? open : undefined}
      className={flagged.length ? 'node flagged' : 'node'}
    >
      <div className="node-head">
        {children.length > 0 ? (
          <button
            type="button"
            className="twisty"
            aria-label={open ? 'Collapse' : 'Expand'}
            onClick={() => setOpen(!open)}
          >
            {open ? '▾' : '▸'}
          </button>
        ) : (
          <span className="twisty" aria-hidden="true" />
        )}
        <span className="node-label">{label}</span>
        <span className="node-numbers">
          {estimate}
          {actual ? ` · ${actual}` : ''}
        </span>
        <span
          className="share"
          title={`${percent.toFixed(1)}% of the ${analyzed ? 'time' : 'cost'}`}
        >
          <span className="share-fill" style={{ width: `${percent}%` }} />
        </span>
      </div>
      {details.length > 0 ? <div className="node-details">{details.join(' · ')}</div> : null}
      {flagged.map((f, i) => (
        <div key={i} className="node-finding">
          ⚠ {f.message}
        </div>
      ))}
      {open && children.length > 0 ? (
        <ul role="group">
          {children.map((child, i) => (
            <PlanItem key={i} node={child} whole={whole} analyzed={analyzed} byNode={byNode} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}
