// query_database, stage "policy": the access policy's and the credential wall's verdict on the
// relations and columns the statement uses — directly, through views and through functions —
// resolved on the call's own connection (so under the call's role: a relation that role cannot
// see is not there for the policy either).
import type { Lookup } from '../../db/call-session.js';
import { AppError, ErrorCodes, isAppError } from '../../core/errors.js';
import type { AccessPolicy } from '../access-policy.js';
import { treeOf, type GuardResult } from '../sql-guard.js';
import type { CredentialScreen } from './credential-screen.js';
import type { CallCache } from './policy-cache.js';
import { checkCatalog } from './catalog-access.js';
import { analyseAgain, holdRelations } from './catalog-moved.js';
import { checkIndirection } from './indirection.js';
import { createJudge, type Judge } from './policy-judge.js';
import { maskedDecisions, maskedOutputs } from './masked-use.js';
import { tryParse } from '../common/parse-tree.js';
import { enforcePolicy, resolveRelations } from './relation-access.js';
import type { Replacement } from './sent-text.js';

export interface Masks {
  /** `tableOid:attnum` of every masked column the statement can read. */
  attrs: Set<string>;
  /**
   * Whether a referenced table has masked columns. Then a computed column (lower(email),
   * row_to_json(t), t.to_jsonb) may carry a masked value, so computed columns are masked too.
   */
  referenced: boolean;
  /**
   * Which output columns, by position, are computed from a masked column; null when that
   * cannot be told, and then every computed column is masked while `referenced`.
   */
  computed: boolean[] | null;
  /**
   * The statement to send instead of the caller's: the same, with the system catalog relations
   * it reads replaced by subqueries without the rows of denied objects (catalog-access.ts).
   */
  statement?: string;
  /** Where `statement` differs from the caller's text, to count error positions in the latter. */
  replacements?: readonly Replacement[];
}

const NO_MASKS: Masks = { attrs: new Set(), referenced: false, computed: null };

const judges = new WeakMap<AccessPolicy, Judge>();
function judgeOf(policy: AccessPolicy): Judge {
  let judge = judges.get(policy);
  if (!judge) judges.set(policy, (judge = createJudge(policy)));
  return judge;
}

/** Throws when the policy or the credential wall refuses the statement; else says what to mask. */
export async function checkPolicy(
  lookup: Lookup,
  policy: AccessPolicy,
  sql: string,
  guard: GuardResult,
  screen: CredentialScreen | null = null,
): Promise<Masks> {
  // Without a policy only credentials are at stake, and most statements cannot reach them.
  if (!policy.active && screen !== null && !(await screen.mayReach(lookup, guard))) return NO_MASKS;
  const judge = judgeOf(policy);
  // The tree the guard judged (a repeated statement's verdict keeps it), else parsed again.
  const known = treeOf(guard, sql);
  const parsed = known ? null : tryParse(sql);
  const tree = known ?? (parsed?.ok ? parsed.tree : {});
  // From the statement's names again when another session dropped or replaced what the
  // analysis was following (the statement will see the catalog as it is then).
  const { relations, columns, setReturning } = await analyseAgain(
    async () => {
      const relations = await resolveRelations(lookup, guard.relations);
      const columns = await enforcePolicy(lookup, judge, relations, tree);
      const { setReturning } = await checkIndirection(lookup, judge, relations, tree);
      return { relations, columns, setReturning };
    },
    () => holdRelations(lookup, guard.relations),
  );
  if (!policy.active) return NO_MASKS;
  const rewritten = await checkCatalog(lookup, judge, relations, tree, sql);
  const sent =
    rewritten === null ? {} : { statement: rewritten.text, replacements: rewritten.replacements };
  const attrs = new Set<string>();
  const maskedNames = new Set<string>();
  const maskedRelations = new Set<number>();
  for (const { relation: rel, attnum, name } of columns) {
    if (policy.columnMasked(rel.schema, rel.name, name)) {
      attrs.add(`${rel.oid}:${attnum}`);
      maskedNames.add(name);
      maskedRelations.add(rel.oid);
    }
  }
  if (maskedNames.size === 0) return { attrs, referenced: false, computed: null, ...sent };
  const aliases = new Set<string>();
  for (const rel of relations) {
    if (!maskedRelations.has(rel.oid)) continue;
    aliases.add(rel.name);
    if (rel.alias) aliases.add(rel.alias);
  }
  const scope = {
    columns: maskedNames,
    relations: aliases,
    allColumns: new Set(columns.map((c) => c.name)),
    setReturning,
  };
  const statement = tree.stmts?.[0]?.stmt;
  if (!policy.allowMaskedPredicates) {
    const problems = maskedDecisions(statement, scope);
    if (problems.length > 0) {
      throw new AppError(
        ErrorCodes.MASKED_COLUMN_DECIDES,
        `Refused: a masked column may be shown (masked) but may not decide which rows come back or in what order, or it would reveal its values: ${problems.join('; ')}. Filter, join and sort on other columns (database.access.allowMaskedPredicates allows this).`,
        { category: 'forbidden' },
      );
    }
  }
  return { attrs, referenced: true, computed: maskedOutputs(statement, scope), ...sent };
}

/**
 * checkPolicy through the policy cache (a call under a policy): the statement's verdict or the
 * lookups' answers from earlier calls where the catalog has not changed since (the call then
 * sends CallCache.guard's check ahead of its SQL). A refusal reached on remembered answers is
 * reached again on fresh ones (`fresh`, the call's own connection) before it is given.
 */
export async function checkPolicyCached(
  call: CallCache,
  fresh: Lookup,
  policy: AccessPolicy,
  sql: string,
  guard: GuardResult,
): Promise<Masks> {
  const remembered = await call.masks(policy, sql);
  if (remembered) return remembered;
  try {
    const masks = await checkPolicy(call.lookup, policy, sql, guard);
    call.remember(policy, sql, masks);
    return masks;
  } catch (error) {
    if (!call.used || !isAppError(error)) throw error;
    return checkPolicy(fresh, policy, sql, guard);
  }
}
