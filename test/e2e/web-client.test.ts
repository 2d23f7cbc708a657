// The web client end to end: the built pgmcp (dist/, embedded database with the demo data,
// authentication on, writes allowed) serving web/dist at /, the scripted fake LLM behind the
// OpenAI provider, and headless Chromium doing what a person does — sign in, pick the database,
// browse the schema, ask a question and see rows and a chart, confirm a write, rename and delete
// a conversation, switch to dark mode, read it on a phone. Screenshots go to .tmp/screenshots/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type Browser } from '../helpers/browser.js';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';
import {
  startFakeLlm,
  type FakeLlm,
  type FakeRequest,
  type FakeTurn,
} from '../helpers/fake-llm.js';
import { serverEnv, spawnPgmcp, startHttpServer, type HttpServer } from '../helpers/server.js';

const QUESTION = 'How many observations were made each month?';
const SERIES_SQL =
  "SELECT date_trunc('month', observed_at)::date AS month, count(*) AS observations FROM demo.observations WHERE observed_at < '2024-07-01' GROUP BY 1 ORDER BY 1";
const WRITE = 'Mark observation 1 as flagged.';
const WRITE_SQL = 'UPDATE demo.observations SET flagged = true WHERE id = 1';
const PASSWORD = 'correct horse battery staple';

// A second database to pick from beside the embedded demo data.
const info = await realPostgres('test/e2e/web-client.test.ts (the web client)');

// Each question gets a tool call first and, once the tool's result is back, a short answer.
function script(request: FakeRequest): FakeTurn {
  const asked = request.lastUserText ?? '';
  const answered = request.toolResults.length > (asked.includes('Mark') ? 1 : 0);
  if (asked.includes('each month')) {
    return answered
      ? {
          text: 'Observations **per month** in the first half of 2024 are in the table and chart above.',
        }
      : { toolCalls: [{ name: 'query_database', args: { query: SERIES_SQL } }] };
  }
  if (asked.includes('Mark')) {
    return answered
      ? { text: 'Done: observation 1 is flagged now.' }
      : { toolCalls: [{ name: 'query_database', args: { query: WRITE_SQL } }] };
  }
  return { text: 'I can answer questions about the demo observatory data.' };
}

describe.skipIf(!info)('web client in Chromium', () => {
  const pg = info as RealPostgres;
  // Users and conversations in a PostgreSQL state database: the embedded one then starts once
  // (for the server), not also for `pgmcp user add`.
  const state = info ? throwawayDatabase(info, 'pgmcp_web_state') : null;
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-web-e2e-'));
  const dataDir = join(root, 'data');
  let llm: FakeLlm;
  let server: HttpServer;
  let browser: Browser;

  beforeAll(async () => {
    llm = await startFakeLlm({ flavor: 'openai', script });
    const env = serverEnv({
      OPENAI_API_KEY: 'test-key',
      OPENAI_BASE_URL: llm.baseUrl,
      PGMCP_LOG_LEVEL: 'warn',
      PGMCP_STATE_URL: state!.url,
    });
    const add = spawnPgmcp(['user', 'add', 'alice'], { env, stdin: 'pipe' });
    add.process.stdin!.end(`${PASSWORD}\n`);
    expect((await add.exited).code, add.stderr()).toBe(0);
    const config = join(root, 'pgmcp.yaml');
    writeFileSync(
      config,
      [
        'databases:',
        '  - name: demo',
        '    embedded: true',
        '    allowWrites: true',
        '  - name: warehouse',
        `    url: ${pg.url}`,
        '',
      ].join('\n'),
    );
    server = await startHttpServer(['--config', config, '--data-dir', dataDir, '--require-auth'], {
      env,
      startTimeoutMs: 120_000,
    });
    browser = await launchBrowser();
  }, 180_000);

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail')
      await browser?.screenshot(`failed-${context.task.name.replace(/\W+/g, '-').slice(0, 30)}`);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await llm?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves the page with its CSP and signs in', async () => {
    const { page } = browser;
    const answer = await page.goto(`${server.origin}/`);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('Password').fill('not the password');
    await browser.screenshot('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'do not match' }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.evaluate("localStorage.getItem('pgmcp.session')")).toMatch(/.{20,}/);
  });

  it('picks a database and browses its schema with comments', async () => {
    const { page } = browser;
    const picker = page.getByLabel('Database');
    expect(await picker.inputValue()).toBe('demo');
    for (const name of ['warehouse', 'demo']) {
      const selected = page.waitForResponse((r) => r.url().endsWith('/api/databases/select'));
      await picker.selectOption(name);
      expect((await selected).status()).toBe(200);
    }
    await page.getByRole('tab', { name: 'Schema' }).click();
    await page
      .locator('.table-entry > summary')
      .filter({ hasText: /^observations\s/ })
      .click();
    await page.getByText('Brightness measured in this filter', { exact: false }).first().waitFor();
    await browser.screenshot('schema');

    // The REST view behind it, as a script sees it.
    const token = await page.evaluate<string>("localStorage.getItem('pgmcp.session')");
    const headers = { authorization: `Bearer ${token}` };
    const schema = await page.request.get(`${server.origin}/api/schema?database=demo`, { headers });
    expect(schema.status()).toBe(200);
    const body = (await schema.json()) as {
      database: string;
      schemas: {
        name: string;
        tables: {
          name: string;
          columns: { name: string; primaryKey: boolean; references: string | null }[];
        }[];
      }[];
    };
    expect(body.database).toBe('demo');
    const observations = body.schemas
      .find((s) => s.name === 'demo')!
      .tables.find((t) => t.name === 'observations')!;
    expect(observations.columns.find((c) => c.name === 'id')?.primaryKey).toBe(true);
    expect(observations.columns.find((c) => c.name === 'session_id')?.references).toBe(
      'demo.observing_sessions(id)',
    );
    const unknown = await page.request.get(`${server.origin}/api/schema?database=nope`, {
      headers,
    });
    expect(unknown.status()).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toContain('Database not found');
    expect((await page.request.get(`${server.origin}/api/schema?database=demo`)).status()).toBe(
      401,
    );
    const openapi = (await (
      await page.request.get(`${server.origin}/api/openapi.json`)
    ).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(openapi.paths)).toContain('/api/schema');
    await page.getByRole('tab', { name: 'Chat' }).click();
  });

  it('asks a question and shows the SQL, the rows and a line chart', async () => {
    const { page } = browser;
    await page.getByLabel('Your question').fill(QUESTION);
    await page.getByLabel('Your question').press('Enter');
    await page.getByText('per month', { exact: true }).waitFor();
    const chart = page.getByRole('img', { name: 'Line chart of observations by month' });
    await chart.waitFor();
    const rows = page.getByRole('region', { name: 'Result rows' }).getByRole('row');
    expect(await rows.count()).toBe(7); // header + January..June
    await page.getByText('query_database').first().click(); // open the step: the SQL
    await page.getByText(SERIES_SQL).waitFor();
    // Sort by the count, descending.
    const header = page.getByRole('columnheader', { name: /observations/ });
    await header.getByRole('button').click();
    await header.getByRole('button').click();
    expect(await header.getAttribute('aria-sort')).toBe('descending');
    await browser.screenshot('chat');
    expect(llm.requests[0]?.toolNames).toContain('query_database');
  });

  it('asks before a write and runs it only when confirmed', async () => {
    const { page } = browser;
    await page.getByLabel('Your question').fill(WRITE);
    await page.getByLabel('Your question').press('Enter');
    const dialog = page.getByRole('alertdialog', { name: 'Run this statement?' });
    await dialog.getByText(WRITE_SQL).waitFor();
    await browser.screenshot('write-confirmation');
    await dialog.getByRole('button', { name: 'Run' }).click();
    await page.getByText('Done: observation 1 is flagged now.').waitFor();
    // The tool result the model saw is the write's own.
    expect(llm.requests.at(-1)?.toolResults.at(-1)).toMatch(/UPDATE 1|1 row/);
    await page
      .getByText(/UPDATE 1|1 row/)
      .first()
      .waitFor();
  });

  it('lists, renames and deletes conversations', async () => {
    const { page } = browser;
    const list = page.getByRole('navigation', { name: 'Conversations' });
    await list.getByRole('listitem').first().waitFor();
    // A second conversation, so one remains after the delete.
    await list.getByRole('button', { name: 'New conversation' }).click();
    await page.getByLabel('Your question').fill('Hello there');
    await page.getByLabel('Your question').press('Enter');
    await page.getByText('I can answer questions about the demo observatory data.').waitFor();
    await expect.poll(() => list.getByRole('listitem').count()).toBe(2);
    // The open conversation is marked in the list.
    await list.locator('[aria-current="page"]', { hasText: 'Hello there' }).waitFor();

    const first = list.getByRole('listitem').filter({ hasText: 'observations' });
    await first.getByRole('button', { name: /^Rename/ }).click();
    await list.getByLabel('New title').fill('Monthly observations');
    await list.getByLabel('New title').press('Enter');
    await list.getByRole('button', { name: 'Monthly observations', exact: true }).waitFor();
    await list.getByRole('searchbox').fill('monthly');
    await expect.poll(() => list.getByRole('listitem').count()).toBe(1);
    await list.getByRole('searchbox').fill('');
    await browser.screenshot('conversations');

    // Reopen the renamed one: its messages come back from the server.
    await list.getByRole('button', { name: 'Monthly observations', exact: true }).click();
    await page.getByRole('img', { name: 'Line chart of observations by month' }).waitFor();

    const hello = list.getByRole('listitem').filter({ hasText: 'Hello' });
    await hello.getByRole('button', { name: /^Delete/ }).click();
    await expect.poll(() => list.getByRole('listitem').count()).toBe(1);
  });

  it('switches to dark mode and stays readable at phone width', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: /Dark/ }).click();
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(21, 23, 28)');
    await browser.screenshot('dark');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('img', { name: /chart/ }).first().scrollIntoViewIfNeeded();
    const overflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - innerWidth',
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await browser.screenshot('phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('keeps the session over a reload and forgets it on sign-out', async () => {
    const { page } = browser;
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    expect(await page.evaluate("localStorage.getItem('pgmcp.session')")).toBeNull();
    await page.reload();
    await page.getByLabel('User name').waitFor();
    // No CSP violation, no script error, along the whole way.
    expect(browser.problems.filter((p) => !p.includes('401'))).toEqual([]);
  });
});
