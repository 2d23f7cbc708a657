// What is too costly to read for every relation at once but cheap for a few: exact sizes
// (a file-system call per fork), index definitions (a deparse each) and view definitions.
import type pg from 'pg';
import { withholdCredential } from '../core/credential-shape.js';
import { lookupEach } from '../db/shielded.js';
import { DETAILS_SQL, type DetailRow } from './queries.js';
import type { RelationDescriptor, VisibilityRules } from './types.js';

export interface RelationDetails {
  /** pg_total_relation_size (summed over partitions for a partitioned table); null for views. */
  sizeBytes: number | null;
  /**
   * pg_get_viewdef for views and materialized views. Null when an access policy is active:
   * a definition could name tables or columns the policy hides.
   */
  viewDefinition: string | null;
  /** CREATE INDEX statements by index name, for the indexes the descriptor lists. */
  indexDefinitions: Map<string, string>;
}

export async function loadDetails(
  client: pg.ClientBase,
  relations: readonly RelationDescriptor[],
  policy: VisibilityRules,
): Promise<Map<number, RelationDetails>> {
  const out = new Map<number, RelationDetails>();
  if (relations.length === 0) return out;
  const byOid = new Map(relations.map((r) => [r.oid, r]));
  // Behind savepoints, relation by relation where a batch fails: a relation another session
  // dropped since the snapshot (or drops meanwhile) has no details, and never fails the call.
  const { rows } = await lookupEach<DetailRow>(
    client,
    DETAILS_SQL,
    relations.map((r) => String(r.oid)),
  );
  for (const row of rows) {
    const rel = byOid.get(Number(row.relid));
    if (!rel) continue;
    // Only indexes the descriptor kept: the policy already dropped any that name a hidden column.
    const listed = new Set(rel.indexes.map((i) => i.name));
    const indexDefinitions = new Map<string, string>();
    for (const def of row.index_definitions ?? []) {
      if (listed.has(def.name)) indexDefinitions.set(def.name, withholdCredential(def.definition));
    }
    out.set(rel.oid, {
      sizeBytes: row.size_bytes === null ? null : Number(row.size_bytes),
      viewDefinition: policy.active ? null : withholdCredential(row.view_definition),
      indexDefinitions,
    });
  }
  return out;
}
