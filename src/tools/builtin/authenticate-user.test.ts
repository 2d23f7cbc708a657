import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { createFakeContext } from '../../testing/fake-context.js';
import { createRegistry } from '../registry.js';
import {
  AUTHENTICATE_USER,
  createAuthenticateUserTool,
  registerAuthenticateUser,
  type LoginFunction,
} from './authenticate-user.js';

const EXPIRES = new Date('2030-01-02T03:04:05.000Z');
const REFUSED = 'Invalid user name or password.';

/** A login that knows one user, and records what it was asked. */
function fakeLogin(): LoginFunction & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  const login = async (username: string, password: string, address: string | null) => {
    calls.push([username, password, address]);
    if (username === 'locked') {
      throw new AppError(ErrorCodes.LOGIN_LOCKED, 'Too many failed logins. Try again in 60 s.', {
        category: 'auth',
        details: { retryAfterSeconds: 60 },
      });
    }
    if (username === 'broken') throw new Error('connection refused');
    if (username !== 'alice' || password !== 'alice-password') {
      throw new AppError(ErrorCodes.LOGIN_FAILED, REFUSED, { category: 'auth' });
    }
    return { sessionToken: 'pgmcps_session', expiresAt: EXPIRES };
  };
  return Object.assign(login, { calls });
}

const call = (login: LoginFunction, args: Record<string, unknown>) =>
  createAuthenticateUserTool({ login }).call(args, createFakeContext().ctx);

describe('authenticate_user', () => {
  it('answers the session token and its expiry, as structured content and text', async () => {
    const login = fakeLogin();
    const result = await call(login, { username: 'alice', password: 'alice-password' });
    const expected = { session_token: 'pgmcps_session', expires_at: '2030-01-02T03:04:05.000Z' };
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(expected);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(expected) }]);
    expect(login.calls).toEqual([['alice', 'alice-password', null]]);
  });

  it('a wrong password and an unknown user get the same isError answer', async () => {
    const login = fakeLogin();
    const wrong = await call(login, { username: 'alice', password: 'guess-one' });
    const unknown = await call(login, { username: 'nobody', password: 'guess-two' });
    expect(wrong).toEqual({ content: [{ type: 'text', text: REFUSED }], isError: true });
    expect(unknown).toEqual(wrong);
    expect(JSON.stringify([wrong, unknown])).not.toContain('guess');
  });

  it('a lock is an isError answer saying when to try again', async () => {
    const result = await call(fakeLogin(), { username: 'locked', password: 'whatever-1' });
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/too many failed/i) });
  });

  it('other failures are not dressed up as a refused login', async () => {
    await expect(call(fakeLogin(), { username: 'broken', password: 'x' })).rejects.toThrow(
      'connection refused',
    );
  });

  it('marks its arguments as secret and registers with a schema the registry compiles', () => {
    const registry = createRegistry();
    registerAuthenticateUser(registry, { login: fakeLogin() });
    const entry = registry.tool(AUTHENTICATE_USER)!;
    expect(entry.spec.sensitiveArguments).toBe(true);
    expect(entry.validate({ username: 'alice', password: 'alice-password' })).toBeNull();
    expect(entry.validate({ username: 'alice' })).not.toBeNull();
    expect(entry.validate({ username: 'alice', password: 'p', extra: 1 })).not.toBeNull();
    // Validation messages name fields, never values.
    expect(entry.validate({ username: 'alice', password: 12345 })?.join(' ')).not.toContain(
      '12345',
    );
  });
});
