// /api/admin/tokens and /api/admin/users: what `pgmcp token` and `pgmcp user` do, for callers
// holding the admin role. The stores validate names, roles, lifetimes and passwords and write
// the audit records; these routes shape requests and answers. Secrets leave only once: the
// raw token in the answer to its creation. Lists carry prefixes, never hashes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseLifetime } from '../auth/index.js';
import { MIN_PASSWORD_LENGTH } from '../state/index.js';
import type { Principal } from '../core/principal.js';
import type { ApiDeps } from './deps.js';
import { ApiError } from './errors.js';
import { ADMIN_ROLE, changeContext, withRole } from './guard.js';
import { NAME, PG_ROLE, ROLES } from './validation.js';
import { tokenView, userView } from './views.js';

/** The same default as `pgmcp token create`. */
export const DEFAULT_TOKEN_LIFETIME = '90d';

const ADMIN = { auth: 'required', roles: [ADMIN_ROLE] } as const;

/** Route options of every admin route: the role is checked before the body is even validated. */
const ADMIN_ROUTE = {
  config: ADMIN,
  preValidation: async (request: FastifyRequest): Promise<void> => {
    withRole(request, [ADMIN_ROLE]);
  },
};

const TOKEN_BODY = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: NAME,
    expires: { type: 'string', minLength: 1, maxLength: 32 },
    roles: ROLES,
    bind_database: { anyOf: [NAME, { type: 'null' }] },
    pg_role: PG_ROLE,
  },
} as const;

// Checked here as well as in the store, so a PATCH with a short password changes nothing else.
const PASSWORD = { type: 'string', minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 } as const;

const USER_BODY = {
  type: 'object',
  required: ['password'],
  additionalProperties: false,
  properties: { username: NAME, name: NAME, password: PASSWORD, roles: ROLES, pg_role: PG_ROLE },
} as const;

const USER_PATCH = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: { roles: ROLES, pg_role: PG_ROLE, enabled: { type: 'boolean' }, password: PASSWORD },
} as const;

const NAME_PARAMS = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

const TOKEN_PARAMS = {
  type: 'object',
  required: ['idOrPrefix'],
  properties: { idOrPrefix: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

const TOKEN_LIST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: { active: { type: 'string', enum: ['true', 'false'] } },
} as const;

interface TokenBody {
  name: string;
  expires?: string;
  roles?: string[];
  bind_database?: string | null;
  pg_role?: string | null;
}

interface UserBody {
  username?: string;
  name?: string;
  password: string;
  roles?: string[];
  pg_role?: string | null;
}

interface UserPatch {
  roles?: string[];
  pg_role?: string | null;
  enabled?: boolean;
  password?: string;
}

export function registerAdminRoutes(scope: FastifyInstance, deps: ApiDeps): void {
  const { auth } = deps;
  const admin = (
    request: FastifyRequest,
  ): { principal: Principal; context: ReturnType<typeof changeContext> } => {
    const principal = withRole(request, [ADMIN_ROLE]);
    return { principal, context: changeContext(principal, deps.clientAddress(request)) };
  };

  scope.get<{ Querystring: { active?: 'true' | 'false' } }>(
    '/admin/tokens',
    { ...ADMIN_ROUTE, schema: { querystring: TOKEN_LIST_QUERY } },
    async (request) => {
      admin(request);
      const tokens = await auth.tokens.list({ activeOnly: request.query.active === 'true' });
      return { tokens: tokens.map(tokenView) };
    },
  );

  scope.post<{ Body: TokenBody }>(
    '/admin/tokens',
    { ...ADMIN_ROUTE, schema: { body: TOKEN_BODY } },
    async (request, reply) => {
      const { context } = admin(request);
      const body = request.body;
      const { token, record } = await auth.tokens.create(
        {
          name: body.name,
          expiresInSeconds: parseLifetime(body.expires ?? DEFAULT_TOKEN_LIFETIME),
          roles: body.roles ?? [],
          boundDatabase: body.bind_database ?? null,
          pgRole: body.pg_role ?? null,
        },
        context,
      );
      // The only time the secret is shown; the answer must not sit in a shared cache.
      reply.code(201).header('cache-control', 'no-store');
      return { token, ...tokenView(record) };
    },
  );

  scope.delete<{ Params: { idOrPrefix: string } }>(
    '/admin/tokens/:idOrPrefix',
    { ...ADMIN_ROUTE, schema: { params: TOKEN_PARAMS } },
    async (request) => {
      const { context } = admin(request);
      return tokenView(await auth.tokens.revoke(request.params.idOrPrefix, context));
    },
  );

  scope.get('/admin/users', ADMIN_ROUTE, async (request) => {
    admin(request);
    return { users: (await auth.users.list()).map(userView) };
  });

  scope.post<{ Body: UserBody }>(
    '/admin/users',
    { ...ADMIN_ROUTE, schema: { body: USER_BODY } },
    async (request, reply) => {
      const { context } = admin(request);
      const body = request.body;
      // `username` as in the answers and /api/login; `name` as `pgmcp user add NAME` calls it.
      if ((body.username === undefined) === (body.name === undefined)) {
        throw new ApiError(400, 'invalid request: give the user name as `username`');
      }
      const user = await auth.users.add(
        {
          username: (body.username ?? body.name)!,
          password: body.password,
          roles: body.roles ?? [],
          pgRole: body.pg_role ?? null,
        },
        context,
      );
      reply.code(201);
      return userView(user);
    },
  );

  scope.patch<{ Params: { name: string }; Body: UserPatch }>(
    '/admin/users/:name',
    { ...ADMIN_ROUTE, schema: { params: NAME_PARAMS, body: USER_PATCH } },
    async (request) => {
      const { principal, context } = admin(request);
      const { name } = request.params;
      const body = request.body;
      if (body.enabled === false) refuseSelf(principal, name, 'disable');
      if (body.roles !== undefined && !body.roles.includes(ADMIN_ROLE)) {
        refuseSelf(principal, name, `take the ${ADMIN_ROLE} role from`);
      }
      // Roles first: they are the likeliest to be refused, before anything has changed.
      let user =
        body.roles !== undefined || body.pg_role !== undefined
          ? await auth.users.update(
              name,
              {
                ...(body.roles !== undefined ? { roles: body.roles } : {}),
                ...(body.pg_role !== undefined ? { pgRole: body.pg_role } : {}),
              },
              context,
            )
          : null;
      if (body.enabled !== undefined)
        user = await auth.users.setEnabled(name, body.enabled, context);
      if (body.password !== undefined) {
        user = await auth.users.setPassword(name, body.password, context);
      }
      return userView(user!);
    },
  );

  scope.delete<{ Params: { name: string } }>(
    '/admin/users/:name',
    { ...ADMIN_ROUTE, schema: { params: NAME_PARAMS } },
    async (request) => {
      const { principal, context } = admin(request);
      refuseSelf(principal, request.params.name, 'remove');
      return userView(await auth.users.remove(request.params.name, context));
    },
  );
}

/** An admin who removes, disables or demotes their own account may leave nobody to undo it. */
function refuseSelf(principal: Principal, username: string, what: string): void {
  if (principal.kind === 'user' && principal.userId === username) {
    throw new ApiError(409, `you cannot ${what} your own account; ask another admin`);
  }
}
