-- pgmcp state schema, version 4.
-- description: legacy MCP sessions shared by every instance, their SSE events for resumption, and the bodies of large messages between instances
--
-- A session is named by the SHA-256 of its Mcp-Session-Id, never the id itself: reading this
-- table gives no one a session to use. `owner` is the caller it is bound to (the HTTP layer's
-- principal key); every instance refuses the session to anyone else. last_seen is moved forward
-- at most every few seconds by the instance serving it, and a session idle past
-- http.sessionIdleTimeoutMs is deleted by whichever instance sweeps first. `holders` names the
-- instances that hold a copy in memory: one that changes the session waits until each has
-- applied the change before it answers.

CREATE TABLE pgmcp.mcp_sessions (
  id_hash text PRIMARY KEY,
  owner text NOT NULL,
  protocol_version text,
  client_capabilities jsonb NOT NULL DEFAULT '{}',
  client_info jsonb,
  log_level text,
  database text,
  subscriptions text[] NOT NULL DEFAULT '{}',
  holders text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX mcp_sessions_last_seen ON pgmcp.mcp_sessions (last_seen);

-- The events of a session's response streams, for a client that resumes one (GET with
-- Last-Event-ID) on another instance than the one that sent them. `finished` marks a stream's
-- end (its row has no data). Kept for minutes, and never longer than their session.
CREATE TABLE pgmcp.mcp_events (
  session_key text NOT NULL,
  stream_id text NOT NULL,
  seq integer NOT NULL,
  data text NOT NULL,
  finished boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_key, stream_id, seq)
);

CREATE INDEX mcp_events_created_at ON pgmcp.mcp_events (created_at);

-- NOTIFY carries at most 8000 bytes: a larger message between instances (a client's answer to
-- a sampling request) is kept here and the notification names its row. Rows live minutes.
CREATE TABLE pgmcp.cluster_messages (
  id bigserial PRIMARY KEY,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
