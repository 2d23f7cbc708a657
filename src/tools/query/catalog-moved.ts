// When the catalog moves under the access policy's analysis: another session drops or replaces
// a view or function between two of its lookups. The analysis of what a statement reaches
// (indirection.ts) reads definitions through definitions(), and the whole of it runs again
// (analyseAgain) after holding what the statement names (holdRelations).
import type { Lookup } from '../../db/call-session.js';
import { isCatalogRace, shieldedQuery } from '../../db/shielded.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { quoteIdent } from '../../core/sql.js';
import type { RelationRef } from '../sql-guard.js';

/**
 * Another session dropped or replaced a view or function the analysis was following, between
 * two of its lookups: the analysis starts again from the statement's names (analyseAgain).
 */
export class CatalogMoved extends Error {
  constructor() {
    super('the catalog changed during the analysis');
  }
}

/**
 * A lookup that deparses definitions (pg_get_viewdef, pg_get_function_sqlbody), behind a
 * savepoint (db/shielded.ts): another session's DROP makes it fail inside the catalog function
 * (the race is there, whatever the statement checks), and then it is CatalogMoved, never the
 * caller's failure; the call's block stays usable.
 */
export async function definitions<R extends object>(
  lookup: Lookup,
  text: string,
  values: unknown[],
): Promise<{ rows: R[] }> {
  try {
    // The locks stay: what was analysed cannot be replaced before the statement reads it.
    return await shieldedQuery<R>(lookup, text, values, { keepLocks: true });
  } catch (error) {
    if (isCatalogRace(error)) throw new CatalogMoved();
    throw error;
  }
}

/** How many times an analysis starts again while the catalog keeps moving under it. */
const ANALYSES = 4;

/**
 * `analyse`, again from the start when the catalog moved under it (CatalogMoved). Before the
 * next try, `hold` takes the locks that keep what the statement names from moving again (a
 * session replacing a view in a loop would otherwise win every race on a busy server). When it
 * still keeps moving, the answer says so (the statement did not run).
 */
export async function analyseAgain<T>(
  analyse: () => Promise<T>,
  hold?: () => Promise<void>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await analyse();
    } catch (error) {
      if (!(error instanceof CatalogMoved)) throw error;
      if (attempt === ANALYSES)
        throw new AppError(
          ErrorCodes.DB_QUERY_FAILED,
          `The views or functions the statement reads were dropped or replaced by another session ${ANALYSES} times while the access policy checked them; the statement did not run. Run it again once they are stable.`,
          { category: 'database' },
        );
      if (attempt === 1 && hold) await hold();
    }
  }
}

/**
 * Holds the relations `refs` name (ACCESS SHARE, the lock the statement takes anyway, allowed in
 * a read-only block) until the call's block ends. LOCK resolves the name after it has the lock,
 * so a view replaced meanwhile is held in its new form, and a view's lock also holds what it
 * reads. A name that is no relation (a CTE), one the role may not read, or one that is gone holds
 * nothing: this only makes the analysis steadier, it decides nothing.
 */
export async function holdRelations(lookup: Lookup, refs: readonly RelationRef[]): Promise<void> {
  for (const ref of refs) {
    const name =
      ref.schema === null
        ? quoteIdent(ref.name)
        : `${quoteIdent(ref.schema)}.${quoteIdent(ref.name)}`;
    try {
      await shieldedQuery(lookup, `LOCK TABLE ${name} IN ACCESS SHARE MODE`, [], {
        keepLocks: true,
      });
    } catch {
      // Nothing to hold under that name; the analysis goes on as it would have.
    }
  }
}
