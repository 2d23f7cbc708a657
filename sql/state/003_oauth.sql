-- pgmcp state schema, version 3.
-- description: built-in OAuth authorization server: signing keys, clients, requests, codes, refresh tokens
--
-- Users are named, not referenced by id: a removed user's grants are refused at use (the
-- token endpoint reads pgmcp.users), and the tables stand on version 1 alone.

CREATE TABLE pgmcp.oauth_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  public_jwk jsonb NOT NULL,
  private_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at timestamptz
);

CREATE TABLE pgmcp.oauth_clients (
  client_id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
  client_name text,
  redirect_uris text[] NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  fetched_at timestamptz NOT NULL DEFAULT now()
);

-- An authorization in progress in one browser: between the authorize request, the login
-- form and the consent form. Only hashes of its id, CSRF token and browser cookie are kept.
CREATE TABLE pgmcp.oauth_requests (
  id_hash text PRIMARY KEY,
  browser_hash text NOT NULL,
  csrf_hash text NOT NULL,
  client_id text NOT NULL,
  redirect_uri text NOT NULL,
  scopes text[] NOT NULL,
  state text,
  code_challenge text NOT NULL,
  resource text NOT NULL,
  username text,
  expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_requests_expires ON pgmcp.oauth_requests (expires_at);

CREATE TABLE pgmcp.oauth_codes (
  code_hash text PRIMARY KEY,
  family uuid NOT NULL,
  client_id text NOT NULL,
  username text NOT NULL,
  redirect_uri text NOT NULL,
  scopes text[] NOT NULL,
  resource text NOT NULL,
  code_challenge text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
CREATE INDEX oauth_codes_expires ON pgmcp.oauth_codes (expires_at);

CREATE TABLE pgmcp.oauth_refresh_tokens (
  token_hash text PRIMARY KEY,
  family uuid NOT NULL,
  client_id text NOT NULL,
  username text NOT NULL,
  scopes text[] NOT NULL,
  resource text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX oauth_refresh_family ON pgmcp.oauth_refresh_tokens (family);
CREATE INDEX oauth_refresh_user ON pgmcp.oauth_refresh_tokens (username);
