// The ROLLBACK that ends every read-only call, kept on a direct connection as a named prepared
// statement: parsed once, then bound by name (one Parse and one ParseComplete less per call).
//
// A caller's code can DEALLOCATE a named statement and PREPARE a look-alike under its name
// (PL/pgSQL's EXECUTE allows both in a read-only transaction, and ROLLBACK does not undo
// them). That is why only the closing statement is named, never BEGIN or the settings, which
// run before the caller's statement: the ROLLBACK runs after it, in the caller's own block,
// so a look-alike would run as the caller who planted it and nobody else. And it is caught
// there: SQL PREPARE cannot make a transaction-control statement, so the step must answer
// with the tag ROLLBACK, or the trip fails (db/pipeline.ts), the call's block is rolled back
// with a plain ROLLBACK and the connection is closed. A deallocated name fails the Bind (a
// server error, the block rolled back the same way).
//
// So the named statement is known to be pgmcp's only when the last trip on the connection
// ended with it, answered ROLLBACK: anything else since (a failed trip, a call that ended
// another way, pgmcp's own work) and the next call parses it again (Close, then Parse).
// Behind a transaction-mode pooler a named statement would not stay with a session, so the
// closing is parsed every time there, as it is on the embedded database.
import type pg from 'pg';
import type { PipelineStep } from './pipeline.js';

const NAME = 'pgmcp_rollback';

const NAMED: PipelineStep = { text: 'ROLLBACK', values: [], name: NAME, tag: 'ROLLBACK' };
const REPARSE: PipelineStep = { ...NAMED, reparse: true };

/** Whether one connection's named ROLLBACK is known to be pgmcp's (per call, see above). */
export interface ClosingState {
  /** The step that closes the block of the next trip. */
  step(): PipelineStep;
  /** After a trip: whether it succeeded with the named ROLLBACK as its last step. */
  tripEnded(ok: boolean, after: readonly PipelineStep[]): void;
  /** After the call: remember the connection's state for its next call. */
  settle(): void;
}

export interface Closings {
  /**
   * The closing of a call on `client`: the named ROLLBACK when `named` (a read-only call on a
   * direct connection to PostgreSQL), else `unnamed` (parsed with the trip, as any statement).
   */
  forCall(client: pg.PoolClient, named: boolean, unnamed: PipelineStep): ClosingState;
  /** Before other work on the connection (withTransaction, pgmcp's own): no longer known. */
  forget(client: pg.PoolClient): void;
}

export function createClosings(): Closings {
  const known = new WeakSet<pg.PoolClient>();
  return {
    forCall(client, named, unnamed) {
      // Taken away now: given back only if this call's last trip verifies it.
      let verified = known.delete(client);
      if (!named) {
        return { step: () => unnamed, tripEnded: () => undefined, settle: () => undefined };
      }
      return {
        step: () => (verified ? NAMED : REPARSE),
        tripEnded(ok, after) {
          verified = ok && after[after.length - 1]?.name === NAME;
        },
        settle() {
          if (verified) known.add(client);
        },
      };
    },
    forget: (client) => void known.delete(client),
  };
}
