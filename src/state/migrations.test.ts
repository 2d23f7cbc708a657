import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packagePath } from '../core/package-path.js';
import { LATEST_VERSION, MIGRATIONS, stateMigrations } from './migrations.js';

// What state databases already in use have recorded in pgmcp.schema_version: a migration is
// known by its version, so these must never be renumbered, and a new database records the
// same descriptions an older one did.
const RECORDED = [
  { version: 1, description: 'tokens, users, sessions, login attempts, lockouts, audit' },
  { version: 2, description: 'conversations (chat history per owner, with token usage)' },
  {
    version: 3,
    description:
      'built-in OAuth authorization server: signing keys, clients, requests, codes, refresh tokens',
  },
  {
    version: 4,
    description: 'audit rows keep the id of the HTTP request they were made for',
  },
  {
    version: 5,
    description:
      'legacy MCP sessions shared by every instance, their SSE events for resumption, and the bodies of large messages between instances',
  },
  {
    version: 6,
    description:
      'write-confirmation nonces already redeemed, so each is accepted once by all instances',
  },
  {
    version: 7,
    description:
      'tasks (tool calls answered with a handle), their status and outcome, for every instance',
  },
];

describe('state migrations (sql/state)', () => {
  const dirs: string[] = [];
  const dirWith = (files: Record<string, string>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'pgmcp-state-sql-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('are the files of sql/state, with the versions and descriptions state databases recorded', () => {
    expect(MIGRATIONS.map(({ version, description }) => ({ version, description }))).toEqual(
      RECORDED,
    );
    expect(LATEST_VERSION).toBe(7);
    // Shipped in the package (package.json `files` has sql/), read from there by the bundle too.
    const files = [
      '001_init.sql',
      '002_conversations.sql',
      '003_oauth.sql',
      '004_audit_request_id.sql',
      '005_mcp_sessions.sql',
      '006_used_nonces.sql',
      '007_tasks.sql',
    ];
    expect(readdirSync(packagePath('sql/state')).sort()).toEqual(files);
    expect(MIGRATIONS.map((m) => m.sql)).toEqual(
      files.map((file) => readFileSync(packagePath(`sql/state/${file}`), 'utf8')),
    );
    expect(MIGRATIONS[0]!.sql).toMatch(/CREATE TABLE pgmcp\.tokens \(/);
    expect(MIGRATIONS[1]!.sql).toMatch(/CREATE TABLE pgmcp\.conversations \(/);
    expect(MIGRATIONS[2]!.sql).toMatch(/CREATE TABLE pgmcp\.oauth_refresh_tokens \(/);
    expect(MIGRATIONS[3]!.sql).toMatch(/ALTER TABLE pgmcp\.audit/);
    expect(MIGRATIONS[4]!.sql).toMatch(/CREATE TABLE pgmcp\.mcp_sessions \(/);
    expect(MIGRATIONS[5]!.sql).toMatch(/CREATE TABLE pgmcp\.used_nonces \(/);
    expect(MIGRATIONS[6]!.sql).toMatch(/CREATE TABLE pgmcp\.tasks \(/);
  });

  it('take the version from the file name, in order, and leave other files alone', () => {
    const dir = dirWith({
      '010_later.sql': '-- description: later\nSELECT 10;\n',
      '002_earlier.sql': '-- a comment first\n-- description:  earlier \nSELECT 2;\n',
      'README.md': 'not a migration',
      '7_short.sql': '-- description: not three digits\n',
    });
    expect(stateMigrations(dir)).toEqual([
      {
        version: 2,
        description: 'earlier',
        sql: '-- a comment first\n-- description:  earlier \nSELECT 2;\n',
      },
      { version: 10, description: 'later', sql: '-- description: later\nSELECT 10;\n' },
    ]);
  });

  it('refuse a file without a description, and a folder without migrations, naming what is wrong', () => {
    const bare = dirWith({ '001_init.sql': 'CREATE TABLE pgmcp.t (x int);\n' });
    expect(() => stateMigrations(bare)).toThrow(
      `${bare}/001_init.sql has no "-- description:" line`,
    );
    const empty = dirWith({});
    expect(() => stateMigrations(empty)).toThrow(`no state migrations (NNN_name.sql) in ${empty}`);
  });
});
