-- pgmcp state schema, version 1.
-- description: tokens, users, sessions, login attempts, lockouts, audit

CREATE TABLE pgmcp.tokens (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  prefix text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  roles text[] NOT NULL DEFAULT '{}',
  bound_database text,
  pg_role text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE UNIQUE INDEX tokens_active_name ON pgmcp.tokens (name) WHERE revoked_at IS NULL;
CREATE INDEX tokens_prefix ON pgmcp.tokens (prefix);

CREATE TABLE pgmcp.users (
  id uuid PRIMARY KEY,
  username text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  roles text[] NOT NULL DEFAULT '{}',
  pg_role text,
  disabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_login_at timestamptz
);

CREATE TABLE pgmcp.sessions (
  id uuid PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  user_id uuid NOT NULL REFERENCES pgmcp.users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  last_used_at timestamptz,
  client_address text
);
CREATE INDEX sessions_user ON pgmcp.sessions (user_id);
CREATE INDEX sessions_expires ON pgmcp.sessions (expires_at);

-- Failed logins only; the flags are cleared when a lock is set (and, for the user, on a
-- successful login) so the next window starts from zero.
CREATE TABLE pgmcp.login_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  username text NOT NULL,
  client_address text,
  at timestamptz NOT NULL DEFAULT now(),
  counts_for_user boolean NOT NULL DEFAULT true,
  counts_for_address boolean NOT NULL DEFAULT true
);
CREATE INDEX login_attempts_user ON pgmcp.login_attempts (username, at);
CREATE INDEX login_attempts_address ON pgmcp.login_attempts (client_address, at);
CREATE INDEX login_attempts_at ON pgmcp.login_attempts (at);

CREATE TABLE pgmcp.lockouts (
  subject_kind text NOT NULL CHECK (subject_kind IN ('user', 'address')),
  subject text NOT NULL,
  locked_until timestamptz NOT NULL,
  PRIMARY KEY (subject_kind, subject)
);

CREATE TABLE pgmcp.audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  event text NOT NULL,
  outcome text NOT NULL,
  principal_kind text,
  principal_id text,
  client_address text,
  database text,
  tool text,
  duration_ms integer,
  details jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_at ON pgmcp.audit (at);
