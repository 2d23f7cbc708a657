-- pgmcp state schema, version 7.
-- description: tasks (tool calls answered with a handle), their status and outcome, for every instance
--
-- A task belongs to one caller (owner) and lives until created_at + ttl_ms; rows past that are
-- deleted as instances go. The instance running a working task refreshes heartbeat_at; a
-- working task whose heartbeat is old (its instance stopped) is marked failed by the next
-- instance that sweeps. cancel_requested asks the running instance to stop the work.
-- input_requests are what a task in input_required waits for; tasks/update (on any instance)
-- moves the answers to input_responses, where the running instance takes them.

CREATE TABLE pgmcp.tasks (
  id text PRIMARY KEY,
  owner text NOT NULL,
  tool text NOT NULL,
  status text NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
  status_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  ttl_ms bigint NOT NULL CHECK (ttl_ms > 0),
  poll_interval_ms integer NOT NULL,
  expires_at timestamptz NOT NULL,
  result jsonb,
  error jsonb,
  input_requests jsonb,
  input_responses jsonb,
  instance text NOT NULL,
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  cancel_requested boolean NOT NULL DEFAULT false
);

CREATE INDEX tasks_owner_created ON pgmcp.tasks (owner, created_at DESC);
CREATE INDEX tasks_expires_at ON pgmcp.tasks (expires_at);
CREATE INDEX tasks_working ON pgmcp.tasks (heartbeat_at) WHERE status IN ('working', 'input_required');
