// The DBA's tools: top queries, explain with hypothetical indexes, index advice for queries and
// for the workload, health checks. Every one is read-only; what each needs from the server
// (HypoPG, pg_stat_statements, pg_read_all_stats) is asked when it is called, and a missing
// piece is answered with what to install or grant.
import type { Catalog } from '../../catalog/index.js';
import type { Signer } from '../../core/signed.js';
import type { NonceLedger } from '../../core/used-nonces.js';
import type { ToolSpec } from '../../core/specs.js';
import { createApplyIndexTool } from './apply-index.js';
import type { DbaDeps } from './deps.js';
import { createExplainQueryTool } from './explain-query.js';
import { createAnalyzeDbHealthTool } from './health/analyze-db-health.js';
import { createAnalyzeQueryIndexesTool, createAnalyzeWorkloadIndexesTool } from './index-advice.js';
import { createGetTopQueriesTool } from './top-queries.js';

export const DBA_TOOL_NAMES = [
  'get_top_queries',
  'explain_query',
  'analyze_query_indexes',
  'analyze_workload_indexes',
  'analyze_db_health',
] as const;

export interface DbaToolDeps extends DbaDeps {
  catalog: Catalog;
  /** With a signer for confirmation nonces: apply_index_recommendation (which refuses to run where writes are not allowed). */
  writes: { signer: Signer; allowed: boolean; nonces?: NonceLedger } | null;
}

export function createDbaTools(deps: DbaToolDeps): ToolSpec[] {
  const tools = [
    createGetTopQueriesTool(deps),
    createExplainQueryTool(deps),
    createAnalyzeQueryIndexesTool(deps),
    createAnalyzeWorkloadIndexesTool(deps),
    createAnalyzeDbHealthTool(deps),
  ];
  if (deps.writes) tools.push(createApplyIndexTool({ ...deps, ...deps.writes }));
  return tools;
}
