import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/errors.js';
import { acceptableRedirectUri, checkClientMetadata, redirectMatches } from './clients.js';

describe('redirect URIs', () => {
  it('accepts https, loopback http and app schemes; refuses the rest', () => {
    for (const ok of [
      'https://claude.ai/api/mcp/auth_callback',
      'http://127.0.0.1:33418/',
      'http://localhost:8080/callback',
      'vscode://vscode.github-authentication/did-authenticate',
    ]) {
      expect(acceptableRedirectUri(ok), ok).toBe(true);
    }
    for (const bad of [
      'http://example.com/cb',
      'javascript:alert(1)',
      'data:text/html,x',
      'https://a.example/cb#frag',
      'not a uri',
      `https://a.example/${'x'.repeat(3000)}`,
    ]) {
      expect(acceptableRedirectUri(bad), bad).toBe(false);
    }
  });

  it('matches exactly, except the port of a loopback IP literal', () => {
    const registered = ['https://app.example/cb', 'http://127.0.0.1:33418/'];
    expect(redirectMatches(registered, 'https://app.example/cb')).toBe(true);
    expect(redirectMatches(registered, 'https://app.example/cb/')).toBe(false);
    expect(redirectMatches(registered, 'https://app.example/cb?x=1')).toBe(false);
    expect(redirectMatches(registered, 'https://app.example:444/cb')).toBe(false);
    expect(redirectMatches(registered, 'http://127.0.0.1:59656/')).toBe(true);
    expect(redirectMatches(registered, 'http://127.0.0.1:59656/other')).toBe(false);
    expect(redirectMatches(registered, 'http://localhost:33418/')).toBe(false);
  });
});

describe('client registration metadata (RFC 7591)', () => {
  it('keeps what pgmcp supports and makes every client public', () => {
    const checked = checkClientMetadata({
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(checked.clientName).toBe('Claude');
    expect(checked.metadata.token_endpoint_auth_method).toBe('none');
  });

  it('refuses missing or bad redirect URIs and unsupported grants', () => {
    const code = (body: unknown): string | undefined => {
      try {
        checkClientMetadata(body);
        return undefined;
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };
    expect(code({})).toBe(ErrorCodes.OAUTH_REGISTRATION_REFUSED);
    expect(code([])).toBe(ErrorCodes.OAUTH_REGISTRATION_REFUSED);
    expect(code({ redirect_uris: ['http://evil.example/cb'] })).toBe(
      ErrorCodes.OAUTH_REGISTRATION_REFUSED,
    );
    expect(code({ redirect_uris: ['https://a.example/cb'], grant_types: ['password'] })).toBe(
      ErrorCodes.OAUTH_REGISTRATION_REFUSED,
    );
    expect(code({ redirect_uris: ['https://a.example/cb'], response_types: ['token'] })).toBe(
      ErrorCodes.OAUTH_REGISTRATION_REFUSED,
    );
    expect(code({ redirect_uris: Array(11).fill('https://a.example/cb') })).toBe(
      ErrorCodes.OAUTH_REGISTRATION_REFUSED,
    );
  });
});
