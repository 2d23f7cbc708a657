// One tool call's connection. The lookups a call makes for itself (relation resolution, the
// access policy, the plan estimate, type names) run here, under the call's settings, role and
// identity, so they see exactly what the call's statement will see: never another pooled
// connection under the login role.
//
// One round trip per step. A call with no lookups sends BEGIN, its settings (if any differ
// from the connection's base), the statement and the closing ROLLBACK (read-only) or COMMIT
// before one Sync. A call with lookups opens the block with its first lookup and closes it
// with its statement.
import type pg from 'pg';
import {
  failedStepOf,
  runPipelined,
  transactionStatus,
  type PipelineRead,
  type PipelineResult,
  type PipelineStep,
} from './pipeline.js';
import { SHIELD, type ShieldOptions } from './shielded.js';
import { roundTrip } from './traced.js';

/** What a lookup needs of a connection; a pg client fits it too. */
export interface Lookup {
  query<R extends object>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  /**
   * As `query`, behind a savepoint of the block, rolled back after it (db/shielded.ts): its
   * failure leaves the block usable, and it lets go of the locks it took. Without it,
   * shieldedQuery sends the savepoint's statements through `query`, which must then be inside
   * a transaction (a pg client after BEGIN).
   */
  shielded?<R extends object>(
    text: string,
    values?: unknown[],
    options?: ShieldOptions,
  ): Promise<{ rows: R[] }>;
}

export interface CallSession extends Lookup {
  /**
   * A lookup for this call, rows as objects. Before the call's statement it joins the call's
   * block (the first one opens it); after the statement it runs in a block of its own with
   * the same settings. Either way one round trip.
   */
  query<R extends object>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  /** A lookup as `query`, behind a savepoint in the same trip (see Lookup.shielded). */
  shielded<R extends object>(
    text: string,
    values?: unknown[],
    options?: ShieldOptions,
  ): Promise<{ rows: R[] }>;
  /** A lookup as `query`, its rows read as arrays with the given caps (an EXPLAIN of the caller's statement). */
  read(step: PipelineStep, read: PipelineRead): Promise<PipelineResult>;
  /**
   * The call's statement, read with offset, limit (+1 to detect more) and a byte cap. It ends
   * the call's block in the same trip (opening it too when no lookup did).
   */
  run(statement: PipelineStep, read: PipelineRead): Promise<PipelineResult>;
  /** The role the call runs as (`none`: the login role). */
  readonly role: string;
  /**
   * A step of pgmcp's own to send ahead of the call's own SQL (the next `read` or `run`), in
   * the same trip and the same block: when it fails, the caller's SQL is not executed.
   */
  precede(step: PipelineStep): void;
  /** Whether the last failure came from the step given to `precede`. */
  readonly precedingFailed: boolean;
}

export interface SessionSetup {
  client: pg.PoolClient;
  readOnly: boolean;
  /** BEGIN (READ ONLY or READ WRITE) and the transaction-local settings, if any. */
  opening: readonly PipelineStep[];
  /** What ends the block: ROLLBACK for a read-only call, COMMIT otherwise. */
  closing: PipelineStep;
  types: pg.CustomTypesConfig;
  /** The role the call runs as. */
  role: string;
  /** The database's name (its spans' db.namespace). */
  database: string;
  markBroken(error: Error): void;
  /** After a read-write statement: retire the connection, or forget its base. */
  afterWrite(): void;
}

/** Lookups read everything: a policy decided on part of the answer would be no policy. */
const LOOKUP_READ: PipelineRead = {
  offset: 0,
  limit: 2 ** 31 - 2,
  maxBytes: Number.POSITIVE_INFINITY,
};

function asObjects<R extends object>(result: PipelineResult): { rows: R[] } {
  const names = result.fields.map((f) => f.name);
  return {
    rows: result.rows.map((row) => {
      const out: Record<string, unknown> = {};
      names.forEach((name, i) => (out[name] = row[i]));
      return out as R;
    }),
  };
}

/** The session and the step that closes it (after `work`, whether it succeeded or not). */
export function createCallSession(setup: SessionSetup): {
  session: CallSession;
  finish(): Promise<void>;
} {
  const { client, opening, closing } = setup;
  /**
   * One trip. A failure other than a plain server ERROR (a lost socket, a result too large,
   * which closes it) retires the connection even when the caller swallows the error.
   */
  const send = async (
    before: readonly PipelineStep[],
    step: PipelineStep,
    read: PipelineRead,
    after: readonly PipelineStep[] = [],
  ): Promise<PipelineResult> => {
    try {
      return await roundTrip(setup.database, step, (sent) =>
        runPipelined(client, before, sent, read, after),
      );
    } catch (error) {
      if ((error as { severity?: unknown }).severity !== 'ERROR')
        setup.markBroken(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  };
  let state: 'fresh' | 'open' | 'done' = 'fresh';
  let preceding: PipelineStep | null = null;
  let precedingFailed = false;

  /** `send`, with the preceding step (if any) last before the call's own SQL. */
  const sendOwn = async (
    before: readonly PipelineStep[],
    step: PipelineStep,
    read: PipelineRead,
    after: readonly PipelineStep[] = [],
  ): Promise<PipelineResult> => {
    if (preceding === null) return send(before, step, read, after);
    const steps = [...before, preceding];
    preceding = null;
    try {
      return await send(steps, step, read, after);
    } catch (error) {
      precedingFailed = failedStepOf(error) === steps.length - 1;
      throw error;
    }
  };

  /** One lookup (`own`: the caller's SQL, with the preceding step ahead of it). */
  const lookup = (step: PipelineStep, caps: PipelineRead, own: boolean) => {
    const read = { ...caps, types: caps.types ?? setup.types };
    const go = own ? sendOwn : send;
    if (state === 'fresh') {
      state = 'open';
      return go(opening, step, read);
    }
    // After the statement: a block of its own, closed in the same trip.
    return state === 'open' ? go([], step, read) : go(opening, step, read, [closing]);
  };

  const session: CallSession = {
    role: setup.role,
    get precedingFailed() {
      return precedingFailed;
    },
    precede(step) {
      preceding = step;
    },
    async query<R extends object>(text: string, values: unknown[] = []) {
      const result = await lookup({ text, values }, LOOKUP_READ, false);
      // Never judge on part of a lookup's answer.
      if (result.truncatedBy !== null) throw new Error('a lookup returned too much to read');
      return asObjects<R>(result);
    },
    async shielded<R extends object>(
      text: string,
      values: unknown[] = [],
      options: ShieldOptions = {},
    ) {
      // After the statement a lookup is a block of its own: nothing of the caller's to keep.
      if (state === 'done') return session.query<R>(text, values);
      const read = { ...LOOKUP_READ, types: setup.types };
      const before = state === 'fresh' ? [...opening, SHIELD.before] : [SHIELD.before];
      state = 'open';
      let result: PipelineResult;
      try {
        const after = options.keepLocks ? [SHIELD.after[1]] : SHIELD.after;
        result = await send(before, { text, values }, read, after);
      } catch (error) {
        // The lookup itself failed (a server error, the block failed at it): back to before it.
        // A failure before the savepoint (the block's opening) leaves nothing to roll back.
        // When that fails too, the lookup's own error says more than the rollback's.
        const at = failedStepOf(error);
        if ((error as { severity?: unknown }).severity === 'ERROR' && at === before.length)
          await send([SHIELD.after[0]], SHIELD.after[1], read).catch(() => undefined);
        throw error;
      }
      if (result.truncatedBy !== null) throw new Error('a lookup returned too much to read');
      return asObjects<R>(result);
    },
    read(step, caps) {
      return lookup(step, caps, true);
    },
    async run(statement, caps) {
      const read = { ...caps, types: caps.types ?? setup.types };
      const opened = state === 'open';
      state = 'done';
      const result = await sendOwn(opened ? [] : opening, statement, read, [closing]);
      // A statement that could write could also have changed the session (UPDATE pg_settings,
      // a function's set_config), and its block was committed.
      if (!setup.readOnly) setup.afterWrite();
      return result;
    },
  };

  return {
    session,
    async finish() {
      // Lookups only, or a statement that failed inside the block: nothing here to keep.
      if (transactionStatus(client) !== 'I') {
        await client.query('ROLLBACK').catch(setup.markBroken);
      }
    },
  };
}
