// Who may ask the built-in authorization server for tokens: clients registered through RFC 7591
// (POST /oauth/register) and clients whose id is the https URL of a Client ID Metadata Document,
// fetched (bounded in time and size, no redirects) and cached in the state database. Either way
// only public clients with PKCE: no client secrets are issued or accepted. Redirect URIs are
// compared exactly, never by prefix. A document that cannot be fetched is logged with the reason;
// the client is told only that it was not allowed or could not be fetched, never whether a port
// answered or what kind of address its host resolves to, so a client_id URL is no port scanner.
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { FetchPolicy } from './fetch-guard.js';
import { fetchJson, FetchProblem } from './fetch-json.js';
import type { ClientRecord, Grants } from '../../state/oauth/grants.js';

const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_NAME_LENGTH = 200;
/** A metadata document is fetched again after this long. */
const DOCUMENT_REFRESH_MS = 3600_000;
const DOCUMENT_TIMEOUT_MS = 3000;
const DOCUMENT_MAX_BYTES = 65_536;

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

/** https anywhere, http on loopback only, or an app's own scheme (vscode:, cursor:). */
export function acceptableRedirectUri(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_URI_LENGTH) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash || value.includes('#')) return false;
  if (url.protocol === 'https:') return true;
  if (url.protocol === 'http:') return LOOPBACK.test(url.hostname);
  return !['javascript:', 'data:', 'file:', 'blob:', 'vbscript:', 'about:', 'ws:', 'wss:'].includes(
    url.protocol,
  );
}

/**
 * Whether a redirect URI a request names is one the client registered: the same string, except
 * that on a loopback IP literal any port matches (RFC 8252 §7.3: a native app listens on
 * whatever port is free; VS Code registers http://127.0.0.1:33418/ and may use another).
 */
export function redirectMatches(registered: readonly string[], asked: string): boolean {
  if (registered.includes(asked)) return true;
  let url: URL;
  try {
    url = new URL(asked);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !/^(127\.0\.0\.1|\[::1\])$/.test(url.hostname)) return false;
  const portless = (u: URL): string => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((entry) => {
    try {
      const known = new URL(entry);
      return (
        known.protocol === 'http:' && portless(known) === portless(url) && !asked.includes('#')
      );
    } catch {
      return false;
    }
  });
}

function refused(message: string): AppError {
  return new AppError(ErrorCodes.OAUTH_REGISTRATION_REFUSED, message, { category: 'input' });
}

/** The RFC 7591 fields pgmcp keeps, checked; throws OAUTH_REGISTRATION_REFUSED. */
export function checkClientMetadata(body: unknown): {
  clientName: string | null;
  redirectUris: string[];
  metadata: Record<string, unknown>;
} {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw refused('The registration must be a JSON object.');
  }
  const input = body as Record<string, unknown>;
  const uris = input.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    throw refused(`redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs.`);
  }
  for (const uri of uris) {
    if (!acceptableRedirectUri(uri)) {
      throw refused(
        'Each redirect URI must be https, http on localhost/127.0.0.1, or an app scheme, without a fragment.',
      );
    }
  }
  const grants = input.grant_types ?? ['authorization_code'];
  if (
    !Array.isArray(grants) ||
    grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')
  ) {
    throw refused('grant_types may hold only authorization_code and refresh_token.');
  }
  const responses = input.response_types ?? ['code'];
  if (!Array.isArray(responses) || responses.some((r) => r !== 'code')) {
    throw refused('response_types may hold only code.');
  }
  const name = input.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.length > MAX_NAME_LENGTH)) {
    throw refused(`client_name must be a string of at most ${MAX_NAME_LENGTH} characters.`);
  }
  const metadata: Record<string, unknown> = {
    grant_types: grants,
    response_types: responses,
    // Public clients only: whatever was asked, the client proves itself with PKCE.
    token_endpoint_auth_method: 'none',
  };
  for (const key of ['client_uri', 'logo_uri', 'software_id', 'software_version']) {
    const value = input[key];
    if (typeof value === 'string' && value.length <= MAX_URI_LENGTH) metadata[key] = value;
  }
  return {
    clientName: typeof name === 'string' ? name : null,
    redirectUris: uris as string[],
    metadata,
  };
}

export interface ClientDirectory {
  /** The client, fetching its metadata document when its id is a URL; throws OAUTH_INVALID_CLIENT. */
  find(clientId: string): Promise<ClientRecord>;
}

export function createClientDirectory(
  grants: Grants,
  options: {
    documents: boolean;
    allowLoopbackDocuments: boolean;
    policy: FetchPolicy;
    /** Where a document that was not fetched is logged, with the reason. */
    logger?: Logger | null;
  },
): ClientDirectory {
  const unknown = (why: string): AppError =>
    new AppError(ErrorCodes.OAUTH_INVALID_CLIENT, why, { category: 'input' });

  const isDocumentId = (clientId: string): boolean => {
    if (!options.documents) return false;
    try {
      const url = new URL(clientId);
      if (url.hash || url.pathname === '/') return false;
      if (url.protocol === 'https:') return true;
      return (
        url.protocol === 'http:' && options.allowLoopbackDocuments && LOOPBACK.test(url.hostname)
      );
    } catch {
      return false;
    }
  };

  const fetchDocument = async (clientId: string): Promise<ClientRecord> => {
    let doc: Record<string, unknown>;
    try {
      doc = await fetchJson(clientId, {
        timeoutMs: DOCUMENT_TIMEOUT_MS,
        maxBytes: DOCUMENT_MAX_BYTES,
        policy: options.policy,
      });
    } catch (error) {
      const forbidden = error instanceof FetchProblem && error.kind === 'forbidden';
      const why = error instanceof FetchProblem ? error.message : 'could not be fetched';
      options.logger?.warn(
        { clientId, problem: why },
        forbidden
          ? 'a client metadata document was not fetched: its URL is not allowed'
          : 'a client metadata document could not be fetched',
      );
      if (forbidden) {
        // Not the document's fault, nor a passing outage: this URL is not one pgmcp fetches.
        throw unknown(
          'The client_id URL is not one pgmcp may fetch from (see auth.oauth.allowedFetchHosts).',
        );
      }
      throw new AppError(
        ErrorCodes.OAUTH_CLIENT_METADATA_UNAVAILABLE,
        "The client's metadata document could not be fetched.",
        { category: 'unavailable' },
      );
    }
    if (doc.client_id !== clientId) {
      throw unknown('The client metadata document does not name itself as client_id.');
    }
    let checked;
    try {
      checked = checkClientMetadata(doc);
    } catch (error) {
      throw unknown(`The client metadata document is not acceptable: ${(error as Error).message}`);
    }
    const record = { clientId, ...checked };
    await grants.saveDocumentClient(record);
    return { ...record, kind: 'metadata_document', fetchedAt: new Date() };
  };

  return {
    async find(clientId) {
      if (
        typeof clientId !== 'string' ||
        clientId.length === 0 ||
        clientId.length > MAX_URI_LENGTH
      ) {
        throw unknown('client_id is missing or too long.');
      }
      const known = await grants.client(clientId);
      if (known && known.kind === 'registered') return known;
      if (!isDocumentId(clientId)) {
        if (known) return known;
        throw unknown('Unknown client_id: register the client first.');
      }
      if (known && Date.now() - known.fetchedAt.getTime() < DOCUMENT_REFRESH_MS) return known;
      return fetchDocument(clientId);
    },
  };
}
