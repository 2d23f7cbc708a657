// The official SDK's OAuth client, as an MCP host uses it: an OAuthClientProvider that keeps
// everything in memory and hands the authorization URL to a "browser" the test supplies (one
// that follows an IdP's redirect, or fills in pgmcp's login and consent forms).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

export const REDIRECT_URL = 'http://127.0.0.1:53682/callback';

export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly stateValue = `st-${Math.random().toString(36).slice(2)}`;

  constructor(
    private readonly metadata: Partial<OAuthClientMetadata> = {},
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return REDIRECT_URL;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test client',
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...this.metadata,
    };
  }
  state(): string {
    return this.stateValue;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

/** Where the browser ended: the redirect back to the client, with its query. */
export type Browser = (authorizationUrl: URL) => Promise<URL>;

/**
 * 401 → discovery → registration → authorization (the browser) → token → a connected client.
 * Checks that the redirect carried our state back, and the issuer (RFC 9207) when it says one.
 */
export async function connectWithOAuth(
  mcpUrl: string,
  provider: MemoryOAuthProvider,
  browser: Browser,
): Promise<{ client: Client; callback: URL }> {
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  const probe = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  let refused: unknown = null;
  await probe.connect(first).catch((error: unknown) => (refused = error));
  if (!(refused instanceof UnauthorizedError)) {
    throw new Error(`expected the first connect to need authorization, got ${String(refused)}`);
  }
  if (!provider.authorizationUrl) throw new Error('the SDK never asked to open a browser');
  const callback = await browser(provider.authorizationUrl);
  if (callback.searchParams.get('state') !== provider.stateValue) {
    throw new Error(`state did not come back: ${callback.toString()}`);
  }
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in the redirect: ${callback.toString()}`);
  await first.finishAuth(code);
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }),
  );
  return { client, callback };
}
