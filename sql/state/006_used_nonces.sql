-- pgmcp state schema, version 6.
-- description: write-confirmation nonces already redeemed, so each is accepted once by all instances
--
-- A write-confirmation nonce is sealed with server.stateSecret and names its own id and expiry;
-- the instance that redeems one inserts its id here first, and a nonce whose id is already
-- present is refused, whichever instance issued or redeemed it. A row is useless once its
-- nonce has expired (an expired nonce is refused before this table is read); instances delete
-- such rows as they go.

CREATE TABLE pgmcp.used_nonces (
  id text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);

CREATE INDEX used_nonces_expires_at ON pgmcp.used_nonces (expires_at);
