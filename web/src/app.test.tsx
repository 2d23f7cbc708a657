import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { App } from './app';
import { readToken, writeToken } from './lib/session';
import { installFakeApi, json, type Recorded } from './testing/fake-api';

const signedIn = (r: Recorded) => r.headers.get('authorization') === 'Bearer tok-alice';

function server() {
  return installFakeApi({
    'GET /api/user/info': (r) =>
      json(
        200,
        signedIn(r)
          ? { authenticated: true, username: 'alice', kind: 'user', roles: [] }
          : { authenticated: false, sign_in_required: true },
      ),
    'POST /api/login': (r) => {
      const body = r.body as { username: string; password: string };
      return body.password === 'secret'
        ? json(200, { session_token: 'tok-alice', expires_at: '2030-01-01T00:00:00Z' })
        : json(401, { error: 'invalid user name or password' });
    },
    'POST /api/logout': (r) =>
      signedIn(r) ? json(200, { success: true }) : json(401, { error: 'sign in' }),
    'GET /api/databases': (r) =>
      signedIn(r)
        ? json(200, {
            databases: [
              {
                name: 'demo',
                host: 'localhost',
                port: 5432,
                database: 'demo',
                user: 'app',
                sslmode: 'disable',
              },
            ],
            current: 'demo',
          })
        : json(401, { error: 'authentication required' }),
    'GET /api/llm/providers': () =>
      json(200, { providers: [{ name: 'openai', defaultModel: 'gpt-test', isDefault: true }] }),
    'GET /api/llm/models': () => json(200, { models: ['gpt-test', 'gpt-other'] }),
    'GET /api/conversations': (r) =>
      signedIn(r)
        ? json(200, { conversations: [{ id: 'conv_1', title: 'Orders by month' }] })
        : json(401, { error: 'authentication required' }),
  });
}

describe('App', () => {
  it('asks for a sign-in, keeps the session over a reload, and forgets it on sign-out', async () => {
    const api = server();
    const first = render(<App />);
    fireEvent.change(await screen.findByLabelText('User name'), { target: { value: 'alice' } });
    // Whether to sign in comes from user info's answer: nothing that fails is asked first.
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/user/info']);
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'wrong' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/do not match/);
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'secret' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Orders by month')).toBeTruthy();
    expect(readToken()).toBe('tok-alice');
    expect(((await screen.findByLabelText('Model')) as HTMLSelectElement).value).toBe('gpt-test');
    first.unmount();

    // A reload: the stored token signs in again without the form.
    render(<App />);
    expect(await screen.findByText('alice')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Sign out' }));
    expect(await screen.findByText('You are signed out.')).toBeTruthy();
    expect(readToken()).toBeNull();
    expect(api.requests.some((r) => r.path === '/api/logout' && signedIn(r))).toBe(true);
  });

  it('goes straight in when the server needs no sign-in, without a conversation list', async () => {
    const api = installFakeApi({
      'GET /api/user/info': () => json(200, { authenticated: false, sign_in_required: false }),
      'GET /api/databases': () => json(200, { databases: [], current: null }),
      'GET /api/llm/providers': () => json(200, { providers: [] }),
    });
    render(<App />);
    expect(await screen.findByText('Ask your database')).toBeTruthy();
    expect(await screen.findByText(/No language model is configured/)).toBeTruthy();
    expect(screen.queryByRole('navigation', { name: 'Conversations' })).toBeNull();
    // The workspace asks for the databases once; the client did not probe them for a 401.
    expect(api.requests.filter((r) => r.path === '/api/databases').length).toBe(1);
  });

  it('asks for the sign-in, and nothing else, when the stored session has ended', async () => {
    writeToken('tok-old');
    const api = installFakeApi({
      'GET /api/user/info': () => json(200, { authenticated: false, sign_in_required: true }),
      'GET /api/databases': () => json(401, { error: 'session expired' }),
    });
    render(<App />);
    expect(await screen.findByText('Your session has ended. Sign in again.')).toBeTruthy();
    expect(screen.getByLabelText('User name')).toBeTruthy();
    expect(readToken()).toBeNull();
    expect(api.requests.map((r) => r.path)).toEqual(['/api/user/info']);
  });

  it('drops an ended session and goes straight in when the server needs no sign-in', async () => {
    writeToken('tok-old');
    const api = installFakeApi({
      'GET /api/user/info': () => json(200, { authenticated: false, sign_in_required: false }),
      'GET /api/databases': (r) =>
        r.headers.has('authorization')
          ? json(401, { error: 'session expired' })
          : json(200, { databases: [], current: null }),
      'GET /api/llm/providers': () => json(200, { providers: [] }),
    });
    render(<App />);
    expect(await screen.findByText(/No language model is configured/)).toBeTruthy();
    expect(readToken()).toBeNull();
    // Only user info saw the old token; nothing after it carries it into a 401.
    expect(api.requests[0]?.path).toBe('/api/user/info');
    expect(api.requests.slice(1).some((r) => r.headers.has('authorization'))).toBe(false);
    expect(screen.queryByLabelText('User name')).toBeNull();
  });

  it('says so when the server cannot be reached, with a way to retry', async () => {
    const api = installFakeApi({
      'GET /api/user/info': () => json(503, { error: 'The state database is unavailable.' }),
    });
    render(<App />);
    expect((await screen.findByRole('alert')).textContent).toMatch(/state database is unavailable/);
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await screen.findByRole('alert');
    expect(api.requests.filter((r) => r.path === '/api/user/info').length).toBeGreaterThan(1);
  });

  it('switches to the dark theme and remembers it', async () => {
    installFakeApi({
      'GET /api/user/info': () => json(200, { authenticated: false, sign_in_required: false }),
      'GET /api/databases': () => json(200, { databases: [], current: null }),
      'GET /api/llm/providers': () => json(200, { providers: [] }),
    });
    render(<App />);
    fireEvent.click(await screen.findByRole('button', { name: /Dark/ }));
    expect(document.documentElement.dataset['theme']).toBe('dark');
    expect(localStorage.getItem('pgmcp.theme')).toBe('dark');
  });
});
