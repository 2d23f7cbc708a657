// Users with passwords: `pgmcp user add|passwd|remove|list|enable|disable`. Passwords are
// scrypt hashes with their own salt and parameters; changing a password, disabling or removing
// a user ends their sessions.
import { randomUUID } from 'node:crypto';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { AuditEventName, AuditLog } from './audit.js';
import { DEFAULT_SCRYPT, hashPassword, type ScryptParams } from './secrets.js';
import type { StateDb } from './state-db.js';
import type { ChangeContext, InvalidationListener } from './types.js';
import { assertName, assertPassword, assertPgRole, assertRoles } from './validate.js';

export interface UserRecord {
  readonly id: string;
  readonly username: string;
  readonly roles: readonly string[];
  readonly pgRole: string | null;
  readonly disabled: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly lastLoginAt: Date | null;
}

export interface AddUserInput {
  username: string;
  password: string;
  roles?: readonly string[];
  pgRole?: string | null;
}

/** Fields to change; absent ones stay as they are. */
export interface UpdateUserInput {
  roles?: readonly string[];
  pgRole?: string | null;
}

export interface UserStore {
  add(input: AddUserInput, context?: ChangeContext): Promise<UserRecord>;
  get(username: string): Promise<UserRecord | null>;
  list(): Promise<UserRecord[]>;
  setPassword(username: string, password: string, context?: ChangeContext): Promise<UserRecord>;
  setEnabled(username: string, enabled: boolean, context?: ChangeContext): Promise<UserRecord>;
  update(username: string, input: UpdateUserInput, context?: ChangeContext): Promise<UserRecord>;
  remove(username: string, context?: ChangeContext): Promise<UserRecord>;
}

export interface UserStoreOptions {
  audit?: AuditLog;
  onInvalidate?: InvalidationListener;
  scrypt?: ScryptParams;
}

interface UserRow {
  id: string;
  username: string;
  roles: string[];
  pg_role: string | null;
  disabled: boolean;
  created_at: Date;
  updated_at: Date;
  last_login_at: Date | null;
}

const COLUMNS = 'id, username, roles, pg_role, disabled, created_at, updated_at, last_login_at';

function toRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    username: row.username,
    roles: row.roles,
    pgRole: row.pg_role,
    disabled: row.disabled,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastLoginAt: row.last_login_at,
  };
}

function notFound(username: string): AppError {
  return new AppError(
    ErrorCodes.AUTH_NOT_FOUND,
    `No user named ${username}. \`pgmcp user list\` shows them.`,
    {
      category: 'not_found',
      details: { username },
    },
  );
}

export function createUserStore(db: StateDb, options: UserStoreOptions = {}): UserStore {
  const params = options.scrypt ?? DEFAULT_SCRYPT;

  const audit = (
    event: AuditEventName,
    user: UserRecord,
    context: ChangeContext,
    details: Record<string, unknown> = {},
  ): void =>
    options.audit?.record({
      event,
      outcome: 'success',
      actor: context.actor ?? null,
      clientAddress: context.clientAddress ?? null,
      details: { username: user.username, ...details },
    });

  // One UPDATE … RETURNING; an absent row is "no such user".
  const change = async (username: string, set: string, values: unknown[]): Promise<UserRecord> => {
    const { rows } = await db.query<UserRow>(
      `UPDATE pgmcp.users SET ${set}, updated_at = now() WHERE username = $1 RETURNING ${COLUMNS}`,
      [username, ...values],
    );
    if (!rows[0]) throw notFound(username);
    return toRecord(rows[0]);
  };

  // The same change and the end of the user's sessions in one statement: nobody (an open
  // stream's re-check on another instance) sees the one without the other.
  const changeEndingSessions = async (
    username: string,
    set: string,
    values: unknown[],
  ): Promise<UserRecord> => {
    const { rows } = await db.query<UserRow>(
      `WITH changed AS (
         UPDATE pgmcp.users SET ${set}, updated_at = now() WHERE username = $1 RETURNING *
       ), ended AS (
         DELETE FROM pgmcp.sessions s USING changed WHERE s.user_id = changed.id
       )
       SELECT ${COLUMNS} FROM changed`,
      [username, ...values],
    );
    if (!rows[0]) throw notFound(username);
    const user = toRecord(rows[0]);
    options.onInvalidate?.({ userId: user.username });
    return user;
  };

  return {
    async add(input, context = {}) {
      const username = assertName(input.username, 'user name');
      assertPassword(input.password);
      const roles = assertRoles(input.roles ?? []);
      // Hash before touching the database: no transaction waits on scrypt.
      const hash = await hashPassword(input.password, params);
      try {
        const { rows } = await db.query<UserRow>(
          `INSERT INTO pgmcp.users (id, username, password_hash, roles, pg_role) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
          [randomUUID(), username, hash, roles, assertPgRole(input.pgRole)],
        );
        const user = toRecord(rows[0]!);
        audit('user_added', user, context, { roles });
        return user;
      } catch (error) {
        if ((error as { code?: string }).code === '23505') {
          throw new AppError(ErrorCodes.AUTH_CONFLICT, `A user named ${username} already exists.`, {
            category: 'conflict',
            details: { username },
          });
        }
        throw error;
      }
    },

    async get(username) {
      const { rows } = await db.query<UserRow>(
        `SELECT ${COLUMNS} FROM pgmcp.users WHERE username = $1`,
        [username],
      );
      return rows[0] ? toRecord(rows[0]) : null;
    },

    async list() {
      const { rows } = await db.query<UserRow>(
        `SELECT ${COLUMNS} FROM pgmcp.users ORDER BY username`,
      );
      return rows.map(toRecord);
    },

    async setPassword(username, password, context = {}) {
      assertPassword(password);
      const hash = await hashPassword(password, params);
      const user = await changeEndingSessions(username, 'password_hash = $2', [hash]);
      audit('user_password_changed', user, context);
      return user;
    },

    async setEnabled(username, enabled, context = {}) {
      const user = enabled
        ? await change(username, 'disabled = $2', [!enabled])
        : await changeEndingSessions(username, 'disabled = $2', [!enabled]);
      audit(enabled ? 'user_enabled' : 'user_disabled', user, context);
      return user;
    },

    async update(username, input, context = {}) {
      const sets: string[] = [];
      const values: unknown[] = [];
      if (input.roles !== undefined) {
        values.push(assertRoles(input.roles));
        sets.push(`roles = $${values.length + 1}`);
      }
      if (input.pgRole !== undefined) {
        values.push(assertPgRole(input.pgRole));
        sets.push(`pg_role = $${values.length + 1}`);
      }
      if (sets.length === 0) {
        const user = await this.get(username);
        if (!user) throw notFound(username);
        return user;
      }
      const user = await change(username, sets.join(', '), values);
      // Cached principals carry the old roles.
      options.onInvalidate?.({ userId: user.username });
      audit('user_updated', user, context, { roles: user.roles, pg_role: user.pgRole });
      return user;
    },

    async remove(username, context = {}) {
      const { rows } = await db.query<UserRow>(
        `DELETE FROM pgmcp.users WHERE username = $1 RETURNING ${COLUMNS}`,
        [username],
      );
      if (!rows[0]) throw notFound(username);
      const user = toRecord(rows[0]);
      options.onInvalidate?.({ userId: user.username });
      audit('user_removed', user, context);
      return user;
    },
  };
}
