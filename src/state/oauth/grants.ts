// What the built-in authorization server keeps between requests, all in the state database so
// any instance can continue what another began: registered clients, authorizations in progress
// (authorize → login → consent), authorization codes and refresh tokens. Secrets are stored only
// as SHA-256 hashes. Codes are single-use (a second use revokes what the first one produced,
// OAuth 2.1 §4.1.3); refresh tokens rotate, and presenting a used one revokes its whole family
// (reuse detection).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from '../state-db.js';

const hash = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');
const secret = (prefix = ''): string => `${prefix}${randomBytes(32).toString('base64url')}`;

export interface ClientRecord {
  clientId: string;
  kind: 'registered' | 'metadata_document';
  clientName: string | null;
  redirectUris: string[];
  metadata: Record<string, unknown>;
  fetchedAt: Date;
}

export interface PendingRequest {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  codeChallenge: string;
  resource: string;
  username: string | null;
}

export interface CodeGrant {
  family: string;
  clientId: string;
  username: string;
  redirectUri: string;
  scopes: string[];
  resource: string;
  codeChallenge: string;
}

export interface RefreshGrant {
  family: string;
  clientId: string;
  username: string;
  scopes: string[];
  resource: string;
}

export interface Grants {
  registerClient(input: {
    clientName: string | null;
    redirectUris: string[];
    metadata: Record<string, unknown>;
  }): Promise<ClientRecord>;
  saveDocumentClient(record: Omit<ClientRecord, 'kind' | 'fetchedAt'>): Promise<void>;
  client(clientId: string): Promise<ClientRecord | null>;

  /** A new authorization in progress; returns its id and CSRF token (each given out once). */
  begin(
    request: Omit<PendingRequest, 'username'>,
    browser: string,
    ttlSeconds: number,
  ): Promise<{ id: string; csrf: string }>;
  /** The request, when id, CSRF token and browser cookie all match and it has not expired. */
  pending(id: string, csrf: string, browser: string): Promise<PendingRequest | null>;
  signedIn(id: string, username: string): Promise<void>;
  /** Removes the request (consent given or refused): it cannot be answered twice. */
  finish(id: string, csrf: string, browser: string): Promise<PendingRequest | null>;

  issueCode(grant: Omit<CodeGrant, 'family'>, ttlSeconds: number): Promise<string>;
  /** The code's grant on first use; 'replayed' on a later one (its tokens are then revoked). */
  redeemCode(code: string): Promise<CodeGrant | 'replayed' | null>;

  issueRefresh(grant: RefreshGrant, ttlSeconds: number): Promise<string>;
  /** The grant of an unused refresh token, now used; 'reused' when it was used before (family revoked). */
  rotateRefresh(token: string): Promise<RefreshGrant | 'reused' | null>;
  /** RFC 7009: revokes the refresh token's family; unknown tokens are ignored. */
  revoke(token: string): Promise<boolean>;
}

interface ClientRow {
  client_id: string;
  kind: ClientRecord['kind'];
  client_name: string | null;
  redirect_uris: string[];
  metadata: Record<string, unknown>;
  fetched_at: Date;
}

const clientOf = (row: ClientRow): ClientRecord => ({
  clientId: row.client_id,
  kind: row.kind,
  clientName: row.client_name,
  redirectUris: row.redirect_uris,
  metadata: row.metadata,
  fetchedAt: row.fetched_at,
});

interface RequestRow {
  client_id: string;
  redirect_uri: string;
  scopes: string[];
  state: string | null;
  code_challenge: string;
  resource: string;
  username: string | null;
}

const requestOf = (row: RequestRow): PendingRequest => ({
  clientId: row.client_id,
  redirectUri: row.redirect_uri,
  scopes: row.scopes,
  state: row.state,
  codeChallenge: row.code_challenge,
  resource: row.resource,
  username: row.username,
});

export function createGrants(db: Queryable): Grants {
  const revokeFamily = (family: string) =>
    db.query(
      'UPDATE pgmcp.oauth_refresh_tokens SET revoked_at = now() WHERE family = $1 AND revoked_at IS NULL',
      [family],
    );
  const tidy = (): void => {
    void db
      .query(
        `WITH a AS (DELETE FROM pgmcp.oauth_requests WHERE expires_at < now()),
              b AS (DELETE FROM pgmcp.oauth_codes WHERE expires_at < now() - interval '1 day')
         DELETE FROM pgmcp.oauth_refresh_tokens WHERE expires_at < now() - interval '1 day'`,
      )
      .catch(() => undefined);
  };

  return {
    async registerClient(input) {
      const { rows } = await db.query<ClientRow>(
        `INSERT INTO pgmcp.oauth_clients (client_id, kind, client_name, redirect_uris, metadata)
         VALUES ($1, 'registered', $2, $3, $4) RETURNING *`,
        [randomUUID(), input.clientName, input.redirectUris, JSON.stringify(input.metadata)],
      );
      return clientOf(rows[0]!);
    },
    async saveDocumentClient(record) {
      await db.query(
        `INSERT INTO pgmcp.oauth_clients (client_id, kind, client_name, redirect_uris, metadata)
         VALUES ($1, 'metadata_document', $2, $3, $4)
         ON CONFLICT (client_id) DO UPDATE SET client_name = $2, redirect_uris = $3,
           metadata = $4, fetched_at = now()
         WHERE pgmcp.oauth_clients.kind = 'metadata_document'`,
        [record.clientId, record.clientName, record.redirectUris, JSON.stringify(record.metadata)],
      );
    },
    async client(clientId) {
      const { rows } = await db.query<ClientRow>(
        'SELECT * FROM pgmcp.oauth_clients WHERE client_id = $1',
        [clientId],
      );
      return rows[0] ? clientOf(rows[0]) : null;
    },

    async begin(request, browser, ttlSeconds) {
      tidy();
      const id = secret();
      const csrf = secret();
      await db.query(
        `INSERT INTO pgmcp.oauth_requests (id_hash, browser_hash, csrf_hash, client_id,
           redirect_uri, scopes, state, code_challenge, resource, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10))`,
        [
          hash(id),
          hash(browser),
          hash(csrf),
          request.clientId,
          request.redirectUri,
          request.scopes,
          request.state,
          request.codeChallenge,
          request.resource,
          ttlSeconds,
        ],
      );
      return { id, csrf };
    },
    async pending(id, csrf, browser) {
      const { rows } = await db.query<RequestRow>(
        `SELECT * FROM pgmcp.oauth_requests
          WHERE id_hash = $1 AND csrf_hash = $2 AND browser_hash = $3 AND expires_at > now()`,
        [hash(id), hash(csrf), hash(browser)],
      );
      return rows[0] ? requestOf(rows[0]) : null;
    },
    async signedIn(id, username) {
      await db.query('UPDATE pgmcp.oauth_requests SET username = $2 WHERE id_hash = $1', [
        hash(id),
        username,
      ]);
    },
    async finish(id, csrf, browser) {
      const { rows } = await db.query<RequestRow>(
        `DELETE FROM pgmcp.oauth_requests
          WHERE id_hash = $1 AND csrf_hash = $2 AND browser_hash = $3 AND expires_at > now()
          RETURNING *`,
        [hash(id), hash(csrf), hash(browser)],
      );
      return rows[0] ? requestOf(rows[0]) : null;
    },

    async issueCode(grant, ttlSeconds) {
      const code = secret();
      await db.query(
        `INSERT INTO pgmcp.oauth_codes (code_hash, family, client_id, username, redirect_uri,
           scopes, resource, code_challenge, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
        [
          hash(code),
          randomUUID(),
          grant.clientId,
          grant.username,
          grant.redirectUri,
          grant.scopes,
          grant.resource,
          grant.codeChallenge,
          ttlSeconds,
        ],
      );
      return code;
    },
    async redeemCode(code) {
      const { rows } = await db.query<{
        family: string;
        client_id: string;
        username: string;
        redirect_uri: string;
        scopes: string[];
        resource: string;
        code_challenge: string;
        fresh: boolean;
      }>(
        `UPDATE pgmcp.oauth_codes SET used_at = coalesce(used_at, now())
          WHERE code_hash = $1
          RETURNING *, (used_at = now() AND expires_at > now()) AS fresh`,
        [hash(code)],
      );
      const row = rows[0];
      if (!row) return null;
      if (!row.fresh) {
        await revokeFamily(row.family);
        return 'replayed';
      }
      return {
        family: row.family,
        clientId: row.client_id,
        username: row.username,
        redirectUri: row.redirect_uri,
        scopes: row.scopes,
        resource: row.resource,
        codeChallenge: row.code_challenge,
      };
    },

    async issueRefresh(grant, ttlSeconds) {
      const token = secret('pgmcpr_');
      await db.query(
        `INSERT INTO pgmcp.oauth_refresh_tokens (token_hash, family, client_id, username, scopes,
           resource, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
        [
          hash(token),
          grant.family,
          grant.clientId,
          grant.username,
          grant.scopes,
          grant.resource,
          ttlSeconds,
        ],
      );
      return token;
    },
    async rotateRefresh(token) {
      const { rows } = await db.query<{
        family: string;
        client_id: string;
        username: string;
        scopes: string[];
        resource: string;
        fresh: boolean;
      }>(
        `UPDATE pgmcp.oauth_refresh_tokens SET used_at = coalesce(used_at, now())
          WHERE token_hash = $1
          RETURNING *, (used_at = now() AND revoked_at IS NULL AND expires_at > now()) AS fresh`,
        [hash(token)],
      );
      const row = rows[0];
      if (!row) return null;
      if (!row.fresh) {
        await revokeFamily(row.family);
        return 'reused';
      }
      return {
        family: row.family,
        clientId: row.client_id,
        username: row.username,
        scopes: row.scopes,
        resource: row.resource,
      };
    },
    async revoke(token) {
      const { rows } = await db.query<{ family: string }>(
        'SELECT family FROM pgmcp.oauth_refresh_tokens WHERE token_hash = $1',
        [hash(token)],
      );
      if (!rows[0]) return false;
      await revokeFamily(rows[0].family);
      return true;
    },
  };
}
