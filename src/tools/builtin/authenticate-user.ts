// authenticate_user: a user name and password in, a session token out, for clients that speak
// only MCP and cannot call POST /api/login. The login itself is injected (tools/ may not import
// auth/); the composition root passes the session store's. The password must never be stored:
// the spec says so (sensitiveArguments), and the exchange log honours it.
import { ErrorCodes, isAppError } from '../../core/errors.js';
import type { ToolSpec } from '../../core/specs.js';
import type { Registry } from '../registry.js';

export interface LoginSession {
  sessionToken: string;
  expiresAt: Date;
}

/** Throws AppError LOGIN_FAILED or LOGIN_LOCKED when the login is refused. */
export type LoginFunction = (
  username: string,
  password: string,
  clientAddress: string | null,
) => Promise<LoginSession>;

export interface AuthenticateUserDeps {
  login: LoginFunction;
}

export const AUTHENTICATE_USER = 'authenticate_user';

const DESCRIPTION = [
  'Sign in with a pgmcp user name and password and get a session token.',
  'Send the token on later requests as the HTTP header `Authorization: Bearer <session_token>`; it stops working at expires_at.',
  'Only for clients that cannot call POST /api/login: the token passes through this conversation.',
  'A refused login never says whether the user exists; repeated failures lock the name for a while.',
].join(' ');

const REFUSALS: ReadonlySet<string> = new Set([ErrorCodes.LOGIN_FAILED, ErrorCodes.LOGIN_LOCKED]);

export function createAuthenticateUserTool(deps: AuthenticateUserDeps): ToolSpec {
  return {
    name: AUTHENTICATE_USER,
    title: 'Sign in',
    description: DESCRIPTION,
    sensitiveArguments: true,
    inputSchema: {
      type: 'object',
      required: ['username', 'password'],
      additionalProperties: false,
      properties: {
        username: { type: 'string', minLength: 1, maxLength: 256, description: 'The user name.' },
        password: { type: 'string', minLength: 1, maxLength: 1024, description: 'The password.' },
      },
    },
    outputSchema: {
      type: 'object',
      required: ['session_token', 'expires_at'],
      properties: {
        session_token: { type: 'string', description: 'The bearer token of the new session.' },
        expires_at: { type: 'string', format: 'date-time' },
      },
    },
    annotations: {
      title: 'Sign in',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    async call(args) {
      const username = args['username'] as string;
      const password = args['password'] as string;
      let session: LoginSession;
      try {
        // No client address reaches a tool call; the per-name lock still applies.
        session = await deps.login(username, password, null);
      } catch (error) {
        // The store's wording is the same for an unknown name, a wrong password and a
        // disabled user, and a lock counts names whether or not such a user exists.
        if (isAppError(error) && REFUSALS.has(error.code)) {
          return { content: [{ type: 'text', text: error.message }], isError: true };
        }
        // The state database being down is said without its address (the message names it);
        // anything else takes the usual path: a logged -32603 with a reference for a bug.
        if (isAppError(error) && error.category === 'unavailable') {
          return {
            content: [{ type: 'text', text: 'Sign-in is unavailable right now; try again later.' }],
            isError: true,
          };
        }
        throw error;
      }
      const structured = {
        session_token: session.sessionToken,
        expires_at: session.expiresAt.toISOString(),
      };
      return {
        content: [{ type: 'text', text: JSON.stringify(structured) }],
        structuredContent: structured,
      };
    },
  };
}

/** Adds authenticate_user; the composition root calls it when user logins are available. */
export function registerAuthenticateUser(registry: Registry, deps: AuthenticateUserDeps): void {
  registry.addTool(createAuthenticateUserTool(deps));
}
