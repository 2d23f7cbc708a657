// `pgmcp chat` driven through a real pseudo-terminal (tmux): the built program, against real
// PostgreSQL and the scripted fake OpenAI API — locally (the pgmcp HTTP app started inside the
// chat) and remotely (a pgmcp with authentication on, reached with a token).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import YAML from 'yaml';
import { displayWidth } from '../../src/cli/chat/render/width.js';
import { startChatServer, type ChatServer } from '../helpers/chat-server.js';
import {
  startFakeLlm,
  type FakeLlm,
  type FakeRequest,
  type FakeTurn,
} from '../helpers/fake-llm.js';
import {
  REPO_ROOT,
  createFixtureSchema,
  realPostgres,
  throwawayDatabase,
  withClient,
  type FixtureSchema,
} from '../helpers/postgres.js';
import { PGMCP_BIN, withoutNode20Warning } from '../helpers/server.js';
import { startTerminal, type Terminal } from '../helpers/tmux.js';

const pg = await realPostgres('pgmcp chat in a terminal');
const KEY = 'sk-term-test-key-0123456789';
const STARTED = 'Ask in plain words';

/** The environment of the chat program: nothing from the developer's shell. */
function chatEnv(
  home: string,
  fake: FakeLlm,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    OPENAI_API_KEY: KEY,
    OPENAI_BASE_URL: fake.baseUrl,
    PGMCP_LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** The screen as the test saw it, kept in .tmp/ (docs/chat.md's example session comes from it). */
function record(name: string, screen: string): void {
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  writeFileSync(join(REPO_ROOT, '.tmp', `chat-terminal-${name}.txt`), `${screen}\n`);
}

/** A script of model turns answered in order, one per model request. */
function turns(...list: FakeTurn[]): (request: FakeRequest) => FakeTurn {
  let index = 0;
  return () => list[index++] ?? { text: 'the script is exhausted' };
}

/** Lines of `screen` from the last one containing `marker` on. */
const after = (screen: string, marker: string): string[] => {
  const lines = screen.split('\n');
  const at = lines.map((l) => l.includes(marker)).lastIndexOf(true);
  return lines.slice(Math.max(0, at));
};

describe.skipIf(!pg)('pgmcp chat, local mode, in a terminal', { timeout: 60_000 }, () => {
  let fixture: FixtureSchema;
  let fake: FakeLlm;
  let term: Terminal;
  let home: string;
  let next: (request: FakeRequest) => FakeTurn = () => ({ text: 'unscripted' });
  const state = throwawayDatabase(pg!, 'pgmcp_term_state');
  const uniqueTable = `term_${Math.random().toString(36).slice(2, 10)}`;

  beforeAll(async () => {
    fixture = await createFixtureSchema(pg!, 'pgmcp_term');
    await withClient(pg!.adminUrl, async (client) => {
      await client.query(`CREATE TABLE ${fixture.name}.notes (id serial PRIMARY KEY, body text)`);
      await client.query(`GRANT SELECT, INSERT ON ${fixture.name}.notes TO ${pg!.role}`);
      await client.query(`GRANT USAGE ON SEQUENCE ${fixture.name}.notes_id_seq TO ${pg!.role}`);
      await client.query(`CREATE TABLE ${fixture.name}.${uniqueTable} (id int)`);
      await client.query(`GRANT SELECT ON ${fixture.name}.${uniqueTable} TO ${pg!.role}`);
    });
    fake = await startFakeLlm({ flavor: 'openai', apiKey: KEY, script: (r) => next(r) });
    home = mkdtempSync(join(tmpdir(), 'pgmcp-term-'));
    const config = join(home, 'pgmcp.yaml');
    writeFileSync(config, YAML.stringify({ state: { url: state.url } }));
    term = await startTerminal({
      command: [
        process.execPath,
        PGMCP_BIN,
        'chat',
        '--config',
        config,
        '--database',
        pg!.url,
        '--allow-writes',
      ],
      env: chatEnv(home, fake),
      cwd: REPO_ROOT,
      width: 100,
      height: 50,
    });
    await term.waitFor(STARTED, 90_000);
  });
  afterAll(async () => {
    await term?.close();
    await fake?.close();
    await fixture?.drop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('answers a question with the SQL it ran and the rows as a table', async () => {
    const sql = `SELECT id, name, weight FROM ${fixture.name}.items ORDER BY weight LIMIT 3`;
    next = turns(
      { toolCalls: [{ name: 'query_database', args: { query: sql } }] },
      { text: 'The lightest are **item 01**, item 02 and item 03.' },
    );
    await term.line('Which items are the lightest?');
    const screen = await term.waitFor('The lightest are item 01, item 02 and item 03.');
    const answer = after(screen, 'Which items are the lightest?').join('\n');
    expect(answer).toContain('▸ query_database');
    expect(answer).toContain(`  ${sql}`);
    expect(answer).toMatch(/# │ id │ name +│ weight/);
    expect(answer).toMatch(/1 │ {2}1 │ item 01 │ {4}1\.5/);
    expect(answer).toContain('(3 rows)');
    // A colour terminal gets colour: the bold name and the table's dim rules.
    const coloured = await term.screen({ escapes: true });
    expect(coloured).toMatch(/\u001b\[1mitem 01/);
    record('local', screen);
  });

  it('fits a wide result to a 60-column terminal and /expand shows a row whole', async () => {
    const sql = `SELECT id, name, repeat('wide text ', 12) || id AS description FROM ${fixture.name}.items ORDER BY id LIMIT 3`;
    next = turns(
      { toolCalls: [{ name: 'query_database', args: { query: sql } }] },
      { text: 'Here are three descriptions.' },
    );
    await term.resize(60);
    await term.line('Describe three items');
    const screen = await term.waitFor('Here are three descriptions.');
    const lines = after(screen, 'Describe three items');
    const table = lines.filter((l) => l.includes('│') || l.includes('┼'));
    expect(table.length).toBe(5); // header, rule, three rows
    for (const line of table) expect(displayWidth(line)).toBeLessThanOrEqual(60);
    expect(table[2]).toMatch(/^1 │ {2}1 │ item 01 │ wide text wide text.*…$/);
    await term.line('/expand 2');
    const expanded = await term.waitFor(/description │ wide text/);
    const record = after(expanded, '/expand 2').join('');
    expect(record.replace(/\s+/g, ' ')).toContain(
      `${'wide text '.repeat(12)}2`.replace(/\s+/g, ' '),
    );
  });

  it('stops an answer on Ctrl-C, cancels its query, and stays', async () => {
    const sql = `SELECT pg_sleep(25) AS slept`;
    next = () => ({ toolCalls: [{ name: 'query_database', args: { query: sql } }] });
    await term.line('Take your time');
    await term.waitFor('running query_database');
    await vi.waitFor(async () => expect(await sleepers(pg!.adminUrl)).toBe(1), {
      timeout: 20_000,
      interval: 100,
    });
    await term.keys('C-c');
    await term.waitFor('(stopped)');
    // The server cancelled the query when the request was aborted.
    await vi.waitFor(async () => expect(await sleepers(pg!.adminUrl)).toBe(0), {
      timeout: 20_000,
      interval: 100,
    });
    expect(await term.exitStatus()).toBeNull();
    next = () => ({ text: 'Still here.' });
    await term.line('Are you there?');
    await term.waitFor('Still here.');
  });

  it('asks before a write, showing the statement, and runs it when approved', async () => {
    const sql = `INSERT INTO ${fixture.name}.notes (body) VALUES ('from the terminal')`;
    next = turns(
      { toolCalls: [{ name: 'query_database', args: { query: sql } }] },
      { text: 'The note is saved.' },
    );
    await term.line('Save a note saying from the terminal');
    const asked = await term.waitFor('Run this statement? [y/N]');
    const ask = after(asked, 'Save a note').join('');
    expect(ask).toContain('This writes to the database: it runs only if you say yes.');
    expect(ask).toContain(sql);
    await term.line('y');
    const saved = await term.waitFor('The note is saved.');
    expect(after(saved, 'Save a note').join('\n')).toContain('(INSERT 1)');
    const { rows } = await withClient(pg!.adminUrl, (c) =>
      c.query<{ body: string }>(`SELECT body FROM ${fixture.name}.notes`),
    );
    expect(rows).toEqual([{ body: 'from the terminal' }]);
  });

  it('lists tools and completes table names with Tab', async () => {
    await term.line('/list tools');
    const tools = await term.waitFor(/query_database +\S/);
    expect(after(tools, '› /list tools').join('\n')).toContain('get_schema_info');
    await term.type(`How many rows has ${uniqueTable.slice(0, 7)}`);
    await term.keys('Tab');
    await term.waitFor(`› How many rows has ${uniqueTable}`);
    await term.keys('C-u');
  });

  it('leaves on Ctrl-D with status 0', async () => {
    record('local-60', await term.screen());
    await term.keys('C-d');
    await vi.waitFor(async () => expect(await term.exitStatus()).toBe(0), {
      timeout: 20_000,
      interval: 100,
    });
  });
});

describe.skipIf(!pg)('pgmcp chat, remote mode with a token', { timeout: 120_000 }, () => {
  let server: ChatServer;
  let fixture: FixtureSchema;
  let fake: FakeLlm;
  let token: string;
  let home: string;
  let next: (request: FakeRequest) => FakeTurn = () => ({ text: 'unscripted' });
  const state = throwawayDatabase(pg!, 'pgmcp_term_remote');

  beforeAll(async () => {
    fixture = await createFixtureSchema(pg!, 'pgmcp_term_r');
    fake = await startFakeLlm({ flavor: 'openai', apiKey: KEY, script: (r) => next(r) });
    server = await startChatServer({
      database: pg!.url,
      config: { state: { url: state.url } },
      env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl },
      requireAuth: true,
    });
    token = await server.token('terminal-tester');
    home = mkdtempSync(join(tmpdir(), 'pgmcp-term-r-'));
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await fixture?.drop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const sessionsOf = async (username: string): Promise<number> => {
    const { rows } = await withClient(state.url, (c) =>
      c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgmcp.sessions s JOIN pgmcp.users u ON u.id = s.user_id
          WHERE u.username = $1`,
        [username],
      ),
    );
    return rows[0]!.n;
  };

  const chat = (width = 100): Promise<Terminal> =>
    startTerminal({
      command: [process.execPath, PGMCP_BIN, 'chat', '--url', server.origin],
      env: chatEnv(home, fake, { PGMCP_TOKEN: token, NO_COLOR: '1' }),
      cwd: REPO_ROOT,
      width,
      height: 50,
    });

  it('saves a conversation, lists it with /history and loads it back; keeps line history', async () => {
    const sql = `SELECT count(*) AS n FROM ${fixture.name}.items`;
    next = turns(
      { toolCalls: [{ name: 'query_database', args: { query: sql } }] },
      { text: 'There are 25 items.' },
    );
    const term = await chat();
    try {
      await term.waitFor(STARTED);
      await term.line('How many items are there?');
      await term.waitFor('There are 25 items.');
      // NO_COLOR: not one escape code.
      expect(await term.screen({ escapes: true })).not.toMatch(/\u001b\[[0-9;]*m/);
      await term.line('/save Item count');
      await term.waitFor(/saved as \S+ \(“Item count”\)/);
      await term.line('/new');
      await term.waitFor('(a new conversation)');
      await term.line('/history');
      const listed = await term.waitFor(/1 {2}Item count/);
      expect(after(listed, '› /history').join('\n')).toMatch(/1 {2}Item count/);
      await term.line('/history load 1');
      const loaded = await term.waitFor('(conversation');
      const shown = after(loaded, '/history load 1').join('\n');
      expect(shown).toContain('── Item count ──');
      expect(shown).toContain('› How many items are there?');
      expect(shown).toContain(sql);
      expect(shown).toContain('There are 25 items.');
      record('remote', loaded);
      await term.keys('C-d');
      await vi.waitFor(async () => expect(await term.exitStatus()).toBe(0), {
        timeout: 20_000,
        interval: 100,
      });
    } finally {
      await term.close();
    }
    // The typed lines outlive the program: in the config directory, and back with Up.
    const saved = readFileSync(join(home, 'config', 'pgmcp', 'chat_history'), 'utf8');
    expect(saved.split('\n')).toEqual(
      expect.arrayContaining(['How many items are there?', '/history load 1']),
    );
    const again = await chat();
    try {
      await again.waitFor(STARTED);
      await again.keys('Up');
      await again.waitFor('› /history load 1');
    } finally {
      await again.close();
    }
  });

  it('logs in as a user with a hidden password, shows it in /show settings, and /logout ends the session', async () => {
    await server.auth.users.add({ username: 'terminal-alice', password: 'alice-password-1' });
    const term = await startTerminal({
      command: [
        process.execPath,
        PGMCP_BIN,
        'chat',
        '--url',
        server.origin,
        '--user',
        'terminal-alice',
      ],
      env: chatEnv(home, fake, { NO_COLOR: '1' }),
      cwd: REPO_ROOT,
    });
    try {
      await term.waitFor('Password for terminal-alice:');
      await term.line('alice-password-1');
      await term.waitFor(STARTED);
      expect(await term.screen()).not.toContain('alice-password-1');
      await term.line('/show settings');
      await term.waitFor(/signed in +terminal-alice \(user\)/);
      expect(await sessionsOf('terminal-alice')).toBe(1);
      await term.line('/logout');
      await term.waitFor('logged out');
      await vi.waitFor(async () => expect(await term.exitStatus()).toBe(0), {
        timeout: 20_000,
        interval: 100,
      });
      // The session ended in the server, not only in the client.
      expect(await sessionsOf('terminal-alice')).toBe(0);
    } finally {
      await term.close();
    }
  });

  it('--once --json prints one JSON answer and exits 0; bad usage exits 2', async () => {
    const sql = `SELECT name FROM ${fixture.name}.items WHERE id = 7`;
    next = turns(
      { toolCalls: [{ name: 'query_database', args: { query: sql } }] },
      { text: 'It is item 07.' },
    );
    const once = await runPgmcp(
      ['chat', '--url', server.origin, '--once', 'What is item 7 called?', '--json'],
      chatEnv(home, fake, { PGMCP_TOKEN: token }),
    );
    expect(once.code).toBe(0);
    const answer = JSON.parse(once.stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({
      text: 'It is item 07.',
      error: null,
      steps: [
        {
          tool: 'query_database',
          input: { query: sql },
          state: 'output-available',
          output: { isError: false, structuredContent: { rows: [['item 07']] } },
        },
      ],
      metadata: { provider: 'openai', model: 'gpt-4o-mini' },
    });
    expect(once.stdout.trim().split('\n')).toHaveLength(1);

    next = turns(
      { toolCalls: [{ name: 'query_database', args: { query: sql } }] },
      { text: 'It is item 07.' },
    );
    const text = await runPgmcp(
      ['chat', '--url', server.origin, '--once', 'What is item 7 called?'],
      chatEnv(home, fake, { PGMCP_TOKEN: token }),
    );
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('It is item 07.');
    expect(text.stdout).not.toMatch(/\u001b/); // not a terminal: no colour, no spinner
    expect(text.stderr).toBe('');

    const bad = await runPgmcp(['chat', '--json'], chatEnv(home, fake));
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('error: --json goes with --once "question"');

    const refused = await runPgmcp(
      ['chat', '--url', server.origin, '--once', 'hello'],
      chatEnv(home, fake, { PGMCP_TOKEN: 'not-a-valid-token' }),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).not.toContain('at ');

    // No credential at all: said before any question is sent, with how to give one.
    const anonymous = await runPgmcp(
      ['chat', '--url', server.origin, '--once', 'hello'],
      chatEnv(home, fake, { PGMCP_TOKEN: '' }),
    );
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr.trim()).toBe(
      'error: Authentication required: send a bearer token. Pass --token (or set PGMCP_TOKEN), or --user NAME to log in.',
    );
  });
});

async function sleepers(adminUrl: string): Promise<number> {
  const { rows } = await withClient(adminUrl, (c) =>
    c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(25)%' AND pid <> pg_backend_pid()`,
    ),
  );
  return rows[0]!.n;
}

function runPgmcp(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PGMCP_BIN, ...args], {
      env,
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr: withoutNode20Warning(stderr) }));
  });
}
