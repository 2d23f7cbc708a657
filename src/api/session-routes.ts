// POST /api/login, POST /api/logout, GET /api/user/info: people signing in with a user name and
// password and getting a session token, the bearer they then send on every request. User info's
// anonymous answer also says whether the server requires a sign-in, so a client (the web page)
// learns it from a request that succeeds instead of probing a guarded route for a 401.
import type { FastifyInstance } from 'fastify';
import { ErrorCodes, isAppError } from '../core/errors.js';
import type { ApiDeps } from './deps.js';
import { ApiError } from './errors.js';
import { bearerOf, signedIn } from './guard.js';

// Long enough for any real name or password; stops megabyte strings before they reach scrypt.
const LOGIN_BODY = {
  type: 'object',
  required: ['username', 'password'],
  additionalProperties: false,
  properties: {
    username: { type: 'string', minLength: 1, maxLength: 256 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;

const USER_INFO = {
  type: 'object',
  required: ['authenticated'],
  properties: {
    authenticated: { type: 'boolean' },
    sign_in_required: {
      type: 'boolean',
      description:
        'Anonymous answers only: whether the other /api routes refuse callers that are not signed in (auth.required).',
    },
    username: { type: ['string', 'null'] },
    kind: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
  },
} as const;

interface LoginBody {
  username: string;
  password: string;
}

export function registerSessionRoutes(scope: FastifyInstance, deps: ApiDeps): void {
  const { auth } = deps;

  scope.post<{ Body: LoginBody }>(
    '/login',
    { config: { auth: 'optional' }, schema: { body: LOGIN_BODY } },
    async (request) => {
      const { username, password } = request.body;
      // Wrong name, wrong password, disabled user: one answer (PGMCP603); a lock (PGMCP604)
      // counts names whether or not such a user exists. Both become 401 in the error handler.
      const session = await auth.sessions
        .login(username, password, deps.clientAddress(request))
        .catch((error: unknown) => {
          const code = isAppError(error) ? error.code : null;
          if (code === ErrorCodes.LOGIN_FAILED || code === ErrorCodes.LOGIN_LOCKED) {
            const reason = code === ErrorCodes.LOGIN_LOCKED ? 'login_locked' : 'login_failed';
            deps.metrics?.authFailure({ reason });
          }
          throw error;
        });
      return { session_token: session.sessionToken, expires_at: session.expiresAt.toISOString() };
    },
  );

  scope.post('/logout', { config: { auth: 'required' } }, async (request) => {
    const principal = signedIn(request);
    const bearer = bearerOf(request);
    if (principal.kind !== 'user' || bearer === null) {
      throw new ApiError(
        400,
        'logout ends a login session; this request does not carry a session token (API tokens are revoked, not logged out)',
      );
    }
    if (!(await auth.sessions.logout(bearer))) {
      throw new ApiError(401, 'the session has already ended');
    }
    return { success: true };
  });

  // Never an error: a client asks this to learn whether its token still works and, when it
  // does not, whether it must sign in before anything else.
  scope.get(
    '/user/info',
    {
      config: { auth: 'optional' },
      schema: {
        summary: 'Who the caller is; for an anonymous caller, whether a sign-in is required.',
        response: { 200: USER_INFO },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (!principal || principal.kind === 'anonymous') {
        return { authenticated: false, sign_in_required: deps.signInRequired ?? false };
      }
      return {
        authenticated: true,
        username: principal.userId,
        kind: principal.kind,
        roles: principal.roles,
      };
    },
  );
}
