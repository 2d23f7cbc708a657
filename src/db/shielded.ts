// Catalog lookups that other sessions' DDL cannot turn into the caller's failure. A catalog
// function such as pg_get_viewdef, pg_get_expr or pg_get_function_sqlbody reads its object
// after the statement's snapshot was taken: an object another session drops meanwhile raises
// XX000 ("could not open relation with OID …", "cache lookup failed …"), and pg_get_viewdef
// waits for the dropping transaction's lock first, so a DROP that holds its locks a moment
// makes that likely, not rare (or a deadlock: the lookup holds the locks of the views it read).
// A check in the same statement that the object still exists does not help: the race is inside
// the function. And inside a call's transaction an error aborts the block: the caller's own
// statement could not run after it.
//
// So such a lookup runs behind a savepoint of the caller's block. Whatever it read is kept;
// the savepoint is rolled back after it either way, which lets go of the locks it took (the
// next one waits for nothing it held), and after a failure the block is as it was before the
// lookup. lookupEach splits a lookup over many objects into halves when it fails, down to
// single objects, whose failures it reports instead of throwing: the caller skips what vanished.
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Lookup } from './call-session.js';
import type { PipelineStep } from './pipeline.js';

const SAVEPOINT = 'pgmcp_lookup';

/**
 * Whether a lookup's failure may come from an object another session changed or dropped
 * (not a lost connection, a cancellation or a timeout, which end the call anyway).
 */
export function isCatalogRace(error: unknown): boolean {
  const e = error as {
    code?: unknown;
    severity?: unknown;
    details?: { sqlstate?: unknown };
  } | null;
  // A server error as the driver reports it, or as an AppError made of one carries it.
  const sqlstate = e?.severity === 'ERROR' ? e.code : e?.details?.sqlstate;
  return typeof sqlstate === 'string' && RACE_CODES.has(sqlstate);
}

/**
 * An internal error (could not open relation, cache lookup failed), a deadlock or serialization
 * failure against the DDL, an object or schema that no longer exists.
 */
const RACE_CODES = new Set(['XX000', '40P01', '40001', '42P01', '42704', '42883', '3F000']);

/**
 * Whether a shielded lookup that succeeded keeps the locks it took until the block ends: the
 * access policy's, on the objects the caller's statement reads (they cannot then be replaced
 * before it runs); not a lookup over every object of the database.
 */
export interface ShieldOptions {
  keepLocks?: boolean;
}

/**
 * A lookup behind a savepoint of the open block (see above); its error is thrown. A lookup
 * without its own `shielded` (a pg client) must be inside a transaction: a savepoint needs one,
 * and outside one this throws rather than run the lookup unshielded.
 */
export async function shieldedQuery<R extends object>(
  lookup: Lookup,
  text: string,
  values: unknown[] = [],
  options: ShieldOptions = {},
): Promise<{ rows: R[] }> {
  if (lookup.shielded) return lookup.shielded<R>(text, values, options);
  try {
    await lookup.query(`SAVEPOINT ${SAVEPOINT}`);
  } catch (error) {
    // no_active_sql_transaction: a caller's mistake, said as one.
    if ((error as { code?: unknown }).code !== '25P01') throw error;
    throw new AppError(
      ErrorCodes.INTERNAL,
      'a shielded lookup needs an open transaction (BEGIN first)',
      { category: 'internal', cause: error },
    );
  }
  let result: { rows: R[] };
  try {
    result = await lookup.query<R>(text, values);
  } catch (error) {
    // Back to before the lookup, if the connection still can; when it cannot (it was lost, or
    // the block is gone with it), the lookup's own error is the one that says what happened.
    await lookup
      .query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`)
      .then(() => lookup.query(`RELEASE SAVEPOINT ${SAVEPOINT}`))
      .catch(() => undefined);
    throw error;
  }
  if (!options.keepLocks) await lookup.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
  await lookup.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
  return result;
}

/** The steps that surround a shielded lookup in a pipelined trip. */
export const SHIELD: {
  readonly before: PipelineStep;
  readonly after: readonly [PipelineStep, PipelineStep];
} = {
  before: { text: `SAVEPOINT ${SAVEPOINT}`, values: [] },
  after: [
    { text: `ROLLBACK TO SAVEPOINT ${SAVEPOINT}`, values: [] },
    { text: `RELEASE SAVEPOINT ${SAVEPOINT}`, values: [] },
  ],
};

export interface EachResult<R> {
  rows: R[];
  /** The objects whose lookup failed on its own (most often: dropped meanwhile). */
  failed: string[];
}

/**
 * `text` over `ids` (passed as $1, an array; `values` follow as $2 …), shielded. When it fails
 * with a catalog race, each half is looked up again, down to single objects; other errors are
 * thrown.
 */
export async function lookupEach<R extends object>(
  lookup: Lookup,
  text: string,
  ids: readonly string[],
  values: unknown[] = [],
): Promise<EachResult<R>> {
  const out: EachResult<R> = { rows: [], failed: [] };
  const visit = async (part: readonly string[]): Promise<void> => {
    if (part.length === 0) return;
    try {
      const { rows } = await shieldedQuery<R>(lookup, text, [part, ...values]);
      out.rows.push(...rows);
    } catch (error) {
      if (!isCatalogRace(error)) throw error;
      if (part.length === 1) {
        out.failed.push(part[0]!);
        return;
      }
      const half = Math.ceil(part.length / 2);
      await visit(part.slice(0, half));
      await visit(part.slice(half));
    }
  };
  await visit(ids);
  return out;
}
