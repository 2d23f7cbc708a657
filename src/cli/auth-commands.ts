// `pgmcp token …` and `pgmcp user …`: manage API tokens and users in the state database. They
// take the options of `serve` and reach the same state database: with the embedded default
// and a server running on the data directory, through that server's socket (the server holds
// the directory), otherwise by starting the embedded database for the length of the command.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { openAuth, parseLifetime, type Authenticator, type ChangeContext } from '../auth/index.js';
import { createSigningKeys } from '../state/oauth/signing-keys.js';
import type { TokenRecord, UserRecord } from '../state/index.js';
import { configError, type Config } from '../config/index.js';
import { createLogger } from './logger.js';
import { readNewPassword } from './password-input.js';

import { DEFAULT_TOKEN_LIFETIME } from './token-lifetime.js';

export { DEFAULT_TOKEN_LIFETIME };

const out = (line = ''): void => void process.stdout.write(`${line}\n`);
const note = (line: string): void => void process.stderr.write(`${line}\n`);

function operator(): ChangeContext {
  let id: string | null = null;
  try {
    id = userInfo().username;
  } catch {
    // no passwd entry (some containers): the record still says it came from the CLI
  }
  return { actor: { kind: 'cli', id } };
}

async function withAuth<T>(
  config: Config,
  logLevel: string | undefined,
  work: (auth: Authenticator) => Promise<T>,
): Promise<T> {
  const logger: Logger = createLogger(logLevel ?? 'warn');
  if (config.state.url === null && !existsSync(config.embedded.dataDir)) {
    // Run from another directory than the server's, the default `.pgmcp/data` is a new one.
    note(
      `pgmcp: no state database in ${resolve(config.embedded.dataDir)} yet; creating one there. A server started elsewhere keeps its own: run this where the server runs, or pass --data-dir (or state.url).`,
    );
  }
  const auth = await openAuth(config, { logger });
  logger.debug({ state: auth.db.description, mode: auth.db.mode }, 'state database open');
  try {
    return await work(auth);
  } finally {
    await auth.close();
    logger.flush();
  }
}

const iso = (date: Date | null): string =>
  date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-';

function table(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  out(line(header));
  for (const row of rows) out(line(row));
}

function tokenJson(t: TokenRecord): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    roles: t.roles,
    bound_database: t.boundDatabase,
    pg_role: t.pgRole,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
  };
}

function userJson(u: UserRecord): Record<string, unknown> {
  return {
    id: u.id,
    username: u.username,
    roles: u.roles,
    pg_role: u.pgRole,
    disabled: u.disabled,
    created_at: u.createdAt.toISOString(),
    last_login_at: u.lastLoginAt?.toISOString() ?? null,
  };
}

export interface TokenCreateOptions {
  name: string;
  expires?: string;
  bindDatabase?: string;
  role?: string[];
  pgRole?: string;
  json?: boolean;
}

export async function tokenCreate(
  config: Config,
  logLevel: string | undefined,
  options: TokenCreateOptions,
): Promise<void> {
  const expiresInSeconds = parseLifetime(options.expires ?? DEFAULT_TOKEN_LIFETIME);
  // A token bound to a name no configured database has could be used for nothing: refuse it.
  // Checked against a `databases:` list only: without one, the configuration this command
  // reads need not be the server's (the single database's name says nothing).
  const names = config.databases.map((entry) => entry.name);
  const bound = options.bindDatabase;
  if (bound !== undefined && names.length > 0 && !names.includes(bound)) {
    throw configError(
      `--bind-database ${bound}: no configured database has that name (configured: ${names.join(', ')})`,
      'bindDatabase',
    );
  }
  await withAuth(config, logLevel, async (auth) => {
    const { token, record } = await auth.tokens.create(
      {
        name: options.name,
        expiresInSeconds,
        roles: options.role ?? [],
        boundDatabase: options.bindDatabase ?? null,
        pgRole: options.pgRole ?? null,
      },
      operator(),
    );
    if (options.json) {
      out(JSON.stringify({ token, ...tokenJson(record) }));
      return;
    }
    // The token alone on stdout, so TOKEN=$(pgmcp token create …) works; the rest on stderr.
    out(token);
    note(
      `Created token ${record.name} (id ${record.id}, prefix ${record.prefix}, expires ${record.expiresAt ? iso(record.expiresAt) : 'never'}).`,
    );
    note('It is shown only this once: store it now. Use it as: Authorization: Bearer <token>');
  });
}

export async function tokenList(
  config: Config,
  logLevel: string | undefined,
  options: { json?: boolean; active?: boolean },
): Promise<void> {
  await withAuth(config, logLevel, async (auth) => {
    const tokens = await auth.tokens.list({ activeOnly: options.active ?? false });
    if (options.json) return out(JSON.stringify(tokens.map(tokenJson), null, 2));
    if (tokens.length === 0)
      return note('No tokens. Create one with: pgmcp token create --name NAME');
    table(
      [
        'ID',
        'NAME',
        'PREFIX',
        'ROLES',
        'DATABASE',
        'PG ROLE',
        'CREATED',
        'EXPIRES',
        'LAST USED',
        'REVOKED',
      ],
      tokens.map((t) => [
        t.id,
        t.name,
        t.prefix,
        t.roles.join(',') || '-',
        t.boundDatabase ?? '-',
        t.pgRole ?? '-',
        iso(t.createdAt),
        t.expiresAt ? iso(t.expiresAt) : 'never',
        iso(t.lastUsedAt),
        iso(t.revokedAt),
      ]),
    );
  });
}

export async function tokenRevoke(
  config: Config,
  logLevel: string | undefined,
  idOrPrefix: string,
): Promise<void> {
  await withAuth(config, logLevel, async (auth) => {
    const before = Date.now();
    const token = await auth.tokens.revoke(idOrPrefix, operator());
    const already = token.revokedAt !== null && token.revokedAt.getTime() < before - 1_000;
    note(
      already
        ? `Token ${token.name} (${token.prefix}) was already revoked at ${iso(token.revokedAt)}.`
        : `Revoked token ${token.name} (${token.prefix}).`,
    );
  });
}

export interface UserOptions {
  role?: string[];
  pgRole?: string;
  json?: boolean;
}

export async function userCommand(
  config: Config,
  logLevel: string | undefined,
  action: 'add' | 'passwd' | 'remove' | 'list' | 'enable' | 'disable' | 'update',
  username: string | undefined,
  options: UserOptions,
): Promise<void> {
  // Ask for the password before opening anything: a prompt must not hold the database.
  const password = action === 'add' || action === 'passwd' ? await readNewPassword(username!) : '';
  await withAuth(config, logLevel, async (auth) => {
    const context = operator();
    const name = username!;
    switch (action) {
      case 'add': {
        const user = await auth.users.add(
          { username: name, password, roles: options.role ?? [], pgRole: options.pgRole ?? null },
          context,
        );
        return note(
          `Added user ${user.username}${user.roles.length ? ` (roles ${user.roles.join(', ')})` : ''}.`,
        );
      }
      case 'passwd':
        await auth.users.setPassword(name, password, context);
        return note(`Changed the password of ${name}; their sessions have ended.`);
      case 'remove':
        await auth.users.remove(name, context);
        return note(`Removed user ${name}.`);
      case 'enable':
      case 'disable':
        await auth.users.setEnabled(name, action === 'enable', context);
        return note(
          action === 'enable' ? `Enabled ${name}.` : `Disabled ${name}; their sessions have ended.`,
        );
      case 'update': {
        const pgRole =
          options.pgRole === undefined
            ? undefined
            : options.pgRole === 'none'
              ? null
              : options.pgRole;
        const user = await auth.users.update(
          name,
          {
            ...(options.role ? { roles: options.role } : {}),
            ...(pgRole !== undefined ? { pgRole } : {}),
          },
          context,
        );
        return note(
          `Updated ${user.username}: roles ${user.roles.join(', ') || '(none)'}, PostgreSQL role ${user.pgRole ?? '(default)'}.`,
        );
      }
      case 'list': {
        const users = await auth.users.list();
        if (options.json) return out(JSON.stringify(users.map(userJson), null, 2));
        if (users.length === 0) return note('No users. Add one with: pgmcp user add NAME');
        return table(
          ['NAME', 'ROLES', 'PG ROLE', 'STATUS', 'CREATED', 'LAST LOGIN'],
          users.map((u) => [
            u.username,
            u.roles.join(',') || '-',
            u.pgRole ?? '-',
            u.disabled ? 'disabled' : 'enabled',
            iso(u.createdAt),
            iso(u.lastLoginAt),
          ]),
        );
      }
    }
  });
}

/** `pgmcp oauth rotate-keys`: a new signing key for the built-in authorization server. */
export async function oauthRotateKeys(config: Config, logLevel: string | undefined): Promise<void> {
  await withAuth(config, logLevel, async (auth) => {
    const keys = createSigningKeys(auth.db);
    const kid = await keys.rotate();
    auth.audit.record({
      event: 'oauth_keys_rotated',
      outcome: 'success',
      actor: operator().actor ?? null,
      details: { kid },
    });
    out(`new signing key ${kid}; the previous keys stay published for a day`);
  });
}
