// Tasks as every instance sharing the state database sees them (pgmcp.tasks, migration 7).
// Ending a task is one UPDATE guarded by its status, so the first end wins wherever it happens;
// expired rows of ended tasks are deleted and abandoned working tasks failed by `sweep` (a
// running task is never deleted: past its ttl it stays visible until it ends, so it can be cancelled).
import type { NewTask, TaskEnd, TaskRecord, TaskStatus, TaskStore } from '../core/tasks.js';
import type { StateDb } from './state-db.js';

interface Row {
  id: string;
  owner: string;
  tool: string;
  status: TaskStatus;
  status_message: string | null;
  created_at: Date;
  updated_at: Date;
  ttl_ms: string | number;
  poll_interval_ms: number;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  input_requests: Record<string, unknown> | null;
  input_responses: Record<string, unknown> | null;
  instance: string;
  heartbeat_at: Date;
  cancel_requested: boolean;
}

const COLUMNS = `id, owner, tool, status, status_message, created_at, updated_at, ttl_ms,
  poll_interval_ms, result, error, input_requests, input_responses, instance, heartbeat_at, cancel_requested`;

/** A task is seen until its ttl ran out, and past it while still running (it can be cancelled). */
const VISIBLE = `(expires_at > now() OR status IN ('working', 'input_required'))`;

const recordOf = (row: Row): TaskRecord => ({
  id: row.id,
  owner: row.owner,
  tool: row.tool,
  status: row.status,
  statusMessage: row.status_message,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
  ttlMs: Number(row.ttl_ms),
  pollIntervalMs: row.poll_interval_ms,
  result: row.result,
  error: row.error,
  inputRequests: row.input_requests,
  inputResponses: row.input_responses,
  instance: row.instance,
  heartbeatAt: new Date(row.heartbeat_at),
  cancelRequested: row.cancel_requested,
});

export function createStateTaskStore(db: Pick<StateDb, 'query'>): TaskStore {
  const one = async (text: string, values: unknown[]): Promise<TaskRecord | null> => {
    const { rows } = await db.query<Row>(text, values);
    return rows[0] ? recordOf(rows[0]) : null;
  };
  return {
    async create(task: NewTask) {
      const created = await one(
        `INSERT INTO pgmcp.tasks (id, owner, tool, status, ttl_ms, poll_interval_ms, expires_at, instance)
         VALUES ($1, $2, $3, 'working', $4::bigint, $5::integer,
           now() + $4::bigint * interval '1 millisecond', $6)
         RETURNING ${COLUMNS}`,
        [task.id, task.owner, task.tool, task.ttlMs, task.pollIntervalMs, task.instance],
      );
      return created!;
    },
    get: (id, owner) =>
      one(`SELECT ${COLUMNS} FROM pgmcp.tasks WHERE id = $1 AND owner = $2 AND ${VISIBLE}`, [
        id,
        owner,
      ]),
    async list(owner, offset, limit) {
      const { rows } = await db.query<Row>(
        `SELECT ${COLUMNS} FROM pgmcp.tasks WHERE owner = $1 AND ${VISIBLE}
         ORDER BY created_at DESC, id OFFSET $2 LIMIT $3`,
        [owner, offset, limit],
      );
      return rows.map(recordOf);
    },
    async end(id, end: TaskEnd) {
      const ended = await one(
        `UPDATE pgmcp.tasks SET status = $2, status_message = $3, result = $4, error = $5,
           updated_at = now()
         WHERE id = $1 AND status IN ('working', 'input_required')
         RETURNING ${COLUMNS}`,
        [
          id,
          end.status,
          end.statusMessage ?? null,
          end.status !== 'cancelled' && end.result ? JSON.stringify(end.result) : null,
          end.status === 'failed' ? JSON.stringify(end.error) : null,
        ],
      );
      return ended ?? one(`SELECT ${COLUMNS} FROM pgmcp.tasks WHERE id = $1`, [id]);
    },
    requestCancel: (id, owner) =>
      one(
        `UPDATE pgmcp.tasks SET cancel_requested = status IN ('working', 'input_required')
         WHERE id = $1 AND owner = $2 AND ${VISIBLE}
         RETURNING ${COLUMNS}`,
        [id, owner],
      ),
    async askInput(id, requests) {
      await db.query(
        `UPDATE pgmcp.tasks SET status = 'input_required', updated_at = now(),
           input_requests = coalesce(input_requests, '{}'::jsonb) || $2::jsonb
         WHERE id = $1 AND status IN ('working', 'input_required')`,
        [id, JSON.stringify(requests)],
      );
    },
    // One statement: the answers to outstanding keys join input_responses and leave input_requests.
    answerInput: (id, owner, responses) =>
      one(
        `WITH given AS (
           SELECT t.id, coalesce(jsonb_object_agg(r.key, r.value)
             FILTER (WHERE t.input_requests ? r.key), '{}'::jsonb) AS answers
           FROM pgmcp.tasks t LEFT JOIN jsonb_each($3::jsonb) r ON true
           WHERE t.id = $1 AND t.owner = $2
             AND (t.expires_at > now() OR t.status IN ('working', 'input_required'))
           GROUP BY t.id)
         UPDATE pgmcp.tasks t SET
           input_responses = coalesce(t.input_responses, '{}'::jsonb) || given.answers,
           input_requests = nullif(
             t.input_requests - ARRAY(SELECT jsonb_object_keys(given.answers)), '{}'::jsonb)
         FROM given WHERE t.id = given.id
         RETURNING ${COLUMNS.split(',')
           .map((c) => `t.${c.trim()}`)
           .join(', ')}`,
        [id, owner, JSON.stringify(responses)],
      ),
    async takeInput(id, keys) {
      const { rows } = await db.query<{ taken: Record<string, unknown> }>(
        `WITH old AS (
           SELECT id, input_responses FROM pgmcp.tasks
           WHERE id = $1 AND input_responses ?& $2::text[] FOR UPDATE)
         UPDATE pgmcp.tasks t SET
           input_responses = t.input_responses - $2::text[],
           status = CASE WHEN t.status = 'input_required' AND t.input_requests IS NULL
                         THEN 'working' ELSE t.status END,
           updated_at = now()
         FROM old WHERE t.id = old.id
         RETURNING (SELECT jsonb_object_agg(k, old.input_responses -> k)
                    FROM unnest($2::text[]) k) AS taken`,
        [id, keys],
      );
      return rows[0]?.taken ?? null;
    },
    async countOwned(owner, staleMs) {
      const { rows } = await db.query<{ running: number; stored: number }>(
        `SELECT count(*) FILTER (WHERE status IN ('working', 'input_required')
                   AND heartbeat_at > now() - $2::bigint * interval '1 millisecond')::int AS running,
                count(*)::int AS stored
         FROM pgmcp.tasks WHERE owner = $1 AND ${VISIBLE}`,
        [owner, staleMs],
      );
      return { running: rows[0]?.running ?? 0, stored: rows[0]?.stored ?? 0 };
    },
    async heartbeat(instance, running) {
      await db.query(
        `UPDATE pgmcp.tasks SET heartbeat_at = now()
         WHERE instance = $1 AND status IN ('working', 'input_required')`,
        [instance],
      );
      if (running.length === 0) return [];
      // Those still to run on: working or input_required, no cancel asked for.
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM pgmcp.tasks WHERE id = ANY($1::text[])
           AND status IN ('working', 'input_required') AND NOT cancel_requested`,
        [running],
      );
      const on = new Set(rows.map((r) => r.id));
      return running.filter((id) => !on.has(id));
    },
    async sweep(staleMs) {
      await db.query(
        `DELETE FROM pgmcp.tasks
         WHERE expires_at <= now() AND status NOT IN ('working', 'input_required')`,
      );
      await db.query(
        `UPDATE pgmcp.tasks SET status = 'failed', updated_at = now(),
           status_message = 'The server instance running this task stopped before it ended.',
           error = $2::jsonb
         WHERE status IN ('working', 'input_required')
           AND heartbeat_at < now() - $1::bigint * interval '1 millisecond'`,
        [
          staleMs,
          JSON.stringify({
            code: -32603,
            message: 'The server instance running this task stopped before it ended.',
          }),
        ],
      );
    },
  };
}
