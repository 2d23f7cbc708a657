// query_database, stage "policy": the access policy's verdict on the relations and columns the
// statement uses, resolved on the call's own connection (so under the call's role: a relation
// that role cannot see is not there for the policy either).
import type { Lookup } from '../../db/call-session.js';
import type { AccessPolicy } from '../access-policy.js';
import type { GuardResult } from '../sql-guard.js';
import { tryParse } from './parse-tree.js';
import { enforcePolicy, resolveRelations } from './relation-access.js';

export interface Masks {
  /** `tableOid:attnum` of every masked column the statement can read. */
  attrs: Set<string>;
  /**
   * Whether a referenced table has masked columns. Then a computed column (lower(email),
   * row_to_json(t), t.to_jsonb) may carry a masked value, so computed columns are masked too.
   */
  referenced: boolean;
}

export const NO_MASKS: Masks = { attrs: new Set(), referenced: false };

/** Throws when the policy refuses the statement; else says which columns to mask. */
export async function checkPolicy(
  lookup: Lookup,
  policy: AccessPolicy,
  sql: string,
  guard: GuardResult,
): Promise<Masks> {
  if (!policy.active) return NO_MASKS;
  const relations = await resolveRelations(lookup, guard.relations);
  const parsed = tryParse(sql);
  const columns = await enforcePolicy(lookup, policy, relations, parsed.ok ? parsed.tree : {});
  const attrs = new Set<string>();
  let referenced = false;
  for (const { relation: rel, attnum, name } of columns) {
    if (policy.columnMasked(rel.schema, rel.name, name)) {
      attrs.add(`${rel.oid}:${attnum}`);
      referenced = true;
    }
  }
  return { attrs, referenced };
}
