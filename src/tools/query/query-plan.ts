// query_database, stage "plan": the planner's estimate for the statement (EXPLAIN without
// ANALYZE executes nothing), on the call's own connection. A read above the configured cost
// or row limits is refused before it runs; a write's estimate goes into its preview.
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { CallSession } from '../../db/call-session.js';
import type { GuardResult } from '../sql-guard.js';
import { positionInQuery } from './sent-text.js';

export interface PlanLimits {
  /** Refuse statements whose estimated plan is above these (null: no limit). */
  maxPlanCost: number | null;
  maxPlanRows: number | null;
}

export interface Estimate {
  cost: number;
  /** Rows the top plan node returns: a read's result size. */
  rows: number;
  /** Rows the statement writes (see rowsWritten). */
  written: number;
  plan: unknown;
}

/** A node of EXPLAIN (FORMAT JSON), the fields read here. */
export interface PlanNode {
  'Node Type'?: string;
  'Parent Relationship'?: string;
  'Total Cost'?: number;
  'Plan Rows'?: number;
  Plans?: PlanNode[];
}

const EXPLAIN_READ = { offset: 0, limit: 1, maxBytes: 10 * 1024 * 1024 };
const EXPLAIN_PREFIX = 'EXPLAIN (FORMAT JSON) ';

/**
 * The planner's estimate. `last`: nothing else runs on this connection afterwards, so the
 * EXPLAIN closes the call's transaction in the same round trip.
 */
export async function estimatePlan(
  session: CallSession,
  sql: string,
  params: unknown[],
  last: boolean,
): Promise<Estimate> {
  // One statement (the guard and the extended protocol both insist), prefixed by EXPLAIN.
  const step = { text: `${EXPLAIN_PREFIX}${sql}`, values: params };
  const result = await (
    last ? session.run(step, EXPLAIN_READ) : session.read(step, EXPLAIN_READ)
  ).catch((error: unknown) => {
    // An error's position counts in the statement, not in the EXPLAIN around it.
    throw positionInQuery(error, EXPLAIN_PREFIX.length);
  });
  const raw = result.rows[0]?.[0];
  const json = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { Plan?: PlanNode }[];
  const top = json[0]?.Plan ?? {};
  return {
    cost: top['Total Cost'] ?? 0,
    rows: top['Plan Rows'] ?? 0,
    written: rowsWritten(top),
    plan: json,
  };
}

/**
 * The rows a write is estimated to write. A ModifyTable node's own estimate is the rows it
 * returns — 0 without RETURNING — so each one counts the rows its input feeds it: one input
 * since PostgreSQL 14 (an Append over the partitions or children), one per target table
 * before. Every ModifyTable counts, those of data-modifying WITH clauses too. A write without
 * one (SELECT INTO, CREATE TABLE AS, SELECT … FOR UPDATE) writes or locks the rows it produces.
 */
export function rowsWritten(top: PlanNode): number {
  let found = false;
  let total = 0;
  const visit = (node: PlanNode): void => {
    if (node['Node Type'] === 'ModifyTable') {
      found = true;
      for (const child of node.Plans ?? []) {
        // InitPlans and SubPlans (a CTE, a scalar subquery) compute values; they are not input.
        const relation = child['Parent Relationship'];
        if (relation === 'Outer' || relation === 'Member') total += child['Plan Rows'] ?? 0;
      }
    }
    for (const child of node.Plans ?? []) visit(child);
  };
  visit(top);
  return found ? total : (top['Plan Rows'] ?? 0);
}

/** Refuse a read whose estimated plan is above the configured limits. */
export async function checkPlanCost(
  session: CallSession,
  limits: PlanLimits,
  sql: string,
  params: unknown[],
  guard: GuardResult,
): Promise<void> {
  if (limits.maxPlanCost === null && limits.maxPlanRows === null) return;
  if (guard.statement === 'ExplainStmt' && guard.analyze) {
    // EXPLAIN ANALYZE runs the statement, and an EXPLAIN cannot be estimated in turn.
    throw new AppError(
      ErrorCodes.TOOL_INPUT_INVALID,
      'Refused: EXPLAIN ANALYZE runs the query, and this database limits estimated plan cost. Use EXPLAIN without ANALYZE to see the plan.',
      { category: 'input' },
    );
  }
  if (guard.statement !== 'SelectStmt') return;
  const plan = await estimatePlan(session, sql, params, false);
  const tooCostly = limits.maxPlanCost !== null && plan.cost > limits.maxPlanCost;
  const tooMany = limits.maxPlanRows !== null && plan.rows > limits.maxPlanRows;
  if (tooCostly || tooMany) {
    const what = tooCostly
      ? `its estimated cost ${Math.round(plan.cost)} is above the limit ${limits.maxPlanCost}`
      : `it is estimated to produce ${Math.round(plan.rows)} rows, above the limit ${limits.maxPlanRows}`;
    throw new AppError(
      ErrorCodes.TOOL_INPUT_INVALID,
      `Refused before running: ${what}. Narrow the query: filter on indexed columns, aggregate instead of listing rows, add LIMIT, or join fewer tables; execute_explain shows the plan.`,
      { category: 'input', details: { estimatedCost: plan.cost, estimatedRows: plan.rows } },
    );
  }
}
