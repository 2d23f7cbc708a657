// MCP Apps end to end: the built pgmcp on the test PostgreSQL, the official SDK client as the
// host's MCP client, and a minimal host page (test/e2e/apps-host/host.ts, on the extension's own
// AppBridge) in headless Chromium. The result grid loads from resources/read, receives the
// tool's result, renders the rows, sorts, filters, saves a CSV, shows the chart, and pages by
// calling query_database again through the host; the CSP the view declares blocks a request to
// another origin; the plan viewer marks the analysis's findings. A client that does not declare
// the extension gets the tools list and the answers it always got. Screenshots go to
// .tmp/screenshots/ (docs/images/ has copies).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Frame } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, SCREENSHOT_DIR, type Browser } from '../helpers/browser.js';
import { REPO_ROOT, realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const info = await realPostgres('test/e2e/mcp-apps.test.ts (MCP Apps in Chromium)');

const APPS = {
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
};
const SALES = 'SELECT month, region, amount FROM shop.sales ORDER BY month, region LIMIT 100';
const SERIES = 'SELECT month, sum(amount) AS amount FROM shop.sales GROUP BY month ORDER BY month';

/** Builds the CSP header a host makes from a view's `_meta.ui.csp`, as the extension says. */
function cspFor(csp: Record<string, string[] | undefined> | undefined): string {
  const list = (key: string): string => (csp?.[key] ?? []).join(' ');
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${list('resourceDomains')}`,
    `style-src 'self' 'unsafe-inline' ${list('resourceDomains')}`,
    `connect-src 'self' ${list('connectDomains')}`,
    `img-src 'self' data: ${list('resourceDomains')}`,
    `font-src 'self' ${list('resourceDomains')}`,
    `media-src 'self' data: ${list('resourceDomains')}`,
    `frame-src ${list('frameDomains') || "'none'"}`,
    "object-src 'none'",
    `base-uri ${list('baseUriDomains') || "'self'"}`,
  ].join('; ');
}

function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

describe.skipIf(!info)('MCP Apps in Chromium', () => {
  const pg = info as RealPostgres;
  let pgmcp: HttpServer;
  let apps: Client;
  let plain: Client;
  let browser: Browser;
  const servers: Server[] = [];
  let hostOrigin = '';
  let viewOrigin = '';
  let outsideOrigin = '';
  const outsideHits: string[] = [];
  const views = new Map<string, { html: string; meta: any }>();
  const forwarded: any[] = [];

  const connect = async (capabilities: Record<string, unknown>): Promise<Client> => {
    const client = new Client({ name: 'pgmcp-apps-host', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities,
    } as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(pgmcp.url)));
    return client;
  };

  beforeAll(async () => {
    await withClient(pg.adminUrl, async (c) => {
      await c.query(`
        CREATE SCHEMA shop;
        CREATE TABLE shop.sales (month date, region text, amount numeric(10,2));
        INSERT INTO shop.sales
          SELECT (date '2024-01-01' + make_interval(months => m))::date, r,
                 round((1000 + m * 85 + length(r) * 40 + (m % 3) * 120)::numeric, 2)
          FROM generate_series(0, 11) m, unnest(array['North', 'South', 'East']) r;
        CREATE TABLE shop.events (id integer, kind text);
        INSERT INTO shop.events
          SELECT i, (array['view', 'click', 'buy'])[1 + i % 3] FROM generate_series(1, 20000) i;
        CREATE FUNCTION shop.sales_by_region() RETURNS TABLE (region text, total numeric)
          LANGUAGE sql STABLE
          AS $$ SELECT region, sum(amount) FROM shop.sales GROUP BY region ORDER BY region $$;
        COMMENT ON FUNCTION shop.sales_by_region() IS '@mcp Sales per region.';
        GRANT USAGE ON SCHEMA shop TO ${pg.role};
        GRANT SELECT ON ALL TABLES IN SCHEMA shop TO ${pg.role};
        ANALYZE shop.sales;
        ANALYZE shop.events;`);
    });
    pgmcp = await startHttpServer(['--database', pg.url], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
    });
    apps = await connect(APPS);
    plain = await connect({});

    // The host page's script: the extension's AppBridge, bundled for the browser.
    const outDir = join(REPO_ROOT, '.tmp', 'apps-host');
    mkdirSync(outDir, { recursive: true });
    await build({
      configFile: false,
      logLevel: 'warn',
      build: {
        outDir,
        emptyOutDir: true,
        minify: false,
        rollupOptions: {
          onwarn(warning, warn) {
            if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
          },
        },
        lib: {
          entry: join(REPO_ROOT, 'test', 'e2e', 'apps-host', 'host.ts'),
          formats: ['es'],
          fileName: () => 'host.js',
        },
      },
    });
    const hostScript = readFileSync(join(outDir, 'host.js'), 'utf8');
    const host = await listen((req, res) => {
      if (req.url === '/host.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(hostScript);
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<!doctype html><html><head><title>test host</title><style>body{margin:16px;font-family:system-ui;background:#eef0f3}iframe{width:100%;border:1px solid #c9ced8;border-radius:8px;background:#fff;height:200px}</style></head><body><div id="views"></div><script type="module" src="/host.js"></script></body></html>',
        );
    });
    // The views on an origin of their own (the host's sandbox), each with the CSP its
    // resource declares.
    const view = await listen((req, res) => {
      const found = views.get(req.url ?? '');
      if (!found) return void res.writeHead(404).end();
      res
        .writeHead(200, {
          'content-type': 'text/html',
          'content-security-policy': cspFor(found.meta?.ui?.csp),
        })
        .end(found.html);
    });
    const outside = await listen((req, res) => {
      outsideHits.push(req.url ?? '');
      res.writeHead(200, { 'access-control-allow-origin': '*' }).end('reached');
    });
    servers.push(host.server, view.server, outside.server);
    hostOrigin = host.origin;
    viewOrigin = view.origin;
    outsideOrigin = outside.origin;

    browser = await launchBrowser({ width: 1100, height: 760 });
    await browser.page.exposeFunction('hostCallTool', async (params: any) => {
      forwarded.push(params);
      return apps.callTool({ name: params.name, arguments: params.arguments });
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await apps?.close();
    await plain?.close();
    for (const server of servers) server.close();
    pgmcp?.process.kill('SIGTERM');
    await pgmcp?.exited;
  });

  /** A screenshot of the view as the host page shows it, with a little of the page around. */
  const shot = async (name: string): Promise<void> => {
    const box = (await browser.page.locator('iframe').boundingBox())!;
    await browser.page.screenshot({
      path: join(SCREENSHOT_DIR, `${name}.png`),
      clip: { x: box.x - 16, y: box.y - 16, width: box.width + 32, height: box.height + 32 },
    });
  };

  /** Reads a view through MCP and opens it in the host page for a call just made. */
  const open = async (
    toolName: string,
    args: Record<string, unknown>,
    theme: 'light' | 'dark' = 'light',
    stripMetaCsp = false,
  ): Promise<Frame> => {
    const tools = (await apps.listTools()).tools;
    const tool = tools.find((t) => t.name === toolName)!;
    const uri = (tool._meta as any).ui.resourceUri as string;
    const read = await apps.readResource({ uri });
    const content = read.contents[0] as any;
    // Stripped of its own meta CSP, a view is held back by the host's CSP alone.
    const path = `/${stripMetaCsp ? 'stripped/' : ''}${uri.slice('ui://'.length)}`;
    const html = stripMetaCsp
      ? (content.text as string).replace(/<meta\s+http-equiv="Content-Security-Policy"[^>]*>/i, '')
      : content.text;
    views.set(path, { html, meta: content._meta });
    const result = await apps.callTool({ name: toolName, arguments: args });
    const page = browser.page;
    await page.goto(hostOrigin);
    await page.waitForFunction(() => (globalThis as any).hostReady === true);
    await page.evaluate((o) => (globalThis as any).openView(o), {
      viewUrl: `${viewOrigin}${path}`,
      tool,
      args,
      result,
      permissions: content._meta.ui.permissions,
      theme,
    } as any);
    await expect.poll(() => page.frames().some((f) => f.url().startsWith(viewOrigin))).toBe(true);
    return page.frames().find((f) => f.url().startsWith(viewOrigin))!;
  };

  it('links query_database to the grid and serves the view with its CSP', async () => {
    const tools = (await apps.listTools()).tools;
    const link = (name: string) => (tools.find((t) => t.name === name)?._meta as any)?.ui;
    expect(link('query_database')).toEqual({ resourceUri: 'ui://pgmcp/result-grid' });
    expect(link('execute_explain')).toEqual({ resourceUri: 'ui://pgmcp/plan-viewer' });
    expect(link('sales_by_region')).toEqual({ resourceUri: 'ui://pgmcp/result-grid' });
    expect(link('count_rows')).toBeUndefined();
    const listed = (await apps.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(
      expect.arrayContaining([
        'ui://pgmcp/result-grid',
        'ui://pgmcp/result-chart',
        'ui://pgmcp/plan-viewer',
      ]),
    );
    for (const uri of [
      'ui://pgmcp/result-grid',
      'ui://pgmcp/result-chart',
      'ui://pgmcp/plan-viewer',
    ]) {
      const [content] = (await apps.readResource({ uri })).contents as any[];
      expect(content).toMatchObject({ uri, mimeType: 'text/html;profile=mcp-app' });
      expect(content._meta.ui.csp.connectDomains).toEqual([]);
      // The built file: self-contained (every script and style inline), its own CSP inside.
      expect(content.text).toMatch(/^<!doctype html>/i);
      expect(content.text).toContain(`http-equiv="Content-Security-Policy"`);
      expect(content.text).toContain("connect-src 'none'");
      expect(content.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
    }
  });

  it('answers a client without the extension exactly as before', async () => {
    const withApps = (await apps.listTools()).tools;
    const without = (await plain.listTools()).tools;
    const stripped = withApps.map((tool) => {
      const meta = { ...(tool._meta as Record<string, unknown> | undefined) };
      delete meta['ui'];
      const { _meta: _dropped, ...rest } = tool;
      return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
    });
    expect(JSON.stringify(stripped)).toBe(JSON.stringify(without));
    expect(without.some((t) => (t._meta as any)?.ui !== undefined)).toBe(false);
    expect((await plain.listResources()).resources.some((r) => r.uri.startsWith('ui://'))).toBe(
      false,
    );
    const call = { name: 'query_database', arguments: { query: SALES, limit: 5 } };
    expect(JSON.stringify(await plain.callTool(call))).toBe(
      JSON.stringify(await apps.callTool(call)),
    );
  });

  it('renders the rows, sorts, copies, filters, saves a CSV and pages through the host', async () => {
    const frame = await open('query_database', { query: SALES, limit: 10 });
    const rows = frame.locator('table.grid tbody tr');
    await expect.poll(() => rows.count()).toBe(10);
    expect(await frame.locator('.count').textContent()).toContain('Rows 1–10 (more exist)');
    expect(await rows.first().locator('td').nth(1).textContent()).toBe('East');
    await shot('apps-result-grid');

    // Sort by amount, largest first.
    const amount = frame.getByRole('button', { name: 'amount' });
    await amount.click();
    await amount.click();
    const amounts = await frame.locator('table.grid tbody tr td:nth-child(3)').allTextContents();
    expect(amounts.map(Number)).toEqual([...amounts.map(Number)].sort((a, b) => b - a));

    await frame.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => frame.locator('.notice').textContent()).toBe('Copied 10 rows.');

    await frame.getByLabel('Filter rows').fill('north');
    await expect.poll(() => rows.count()).toBe(3);
    await frame.getByRole('button', { name: 'CSV' }).click();
    await expect
      .poll(() => browser.page.evaluate(() => (globalThis as any).hostDownloads.length))
      .toBe(1);
    const saved = await browser.page.evaluate(() => (globalThis as any).hostDownloads[0]);
    const csv = saved.contents[0].resource.text as string;
    expect(csv.split('\r\n')[0]).toBe('month,region,amount');
    expect(csv.trim().split('\r\n')).toHaveLength(4);
    // The person cancels the host's save dialog: no browser download behind their back.
    const browserDownloads: string[] = [];
    browser.page.on('download', (d) => browserDownloads.push(d.suggestedFilename()));
    await browser.page.evaluate(() => ((globalThis as any).hostDeclinesDownloads = true));
    await frame.getByRole('button', { name: 'CSV' }).click();
    await expect.poll(() => frame.locator('.notice').textContent()).toBe('The CSV was not saved.');
    expect(await browser.page.evaluate(() => (globalThis as any).hostDownloads.length)).toBe(2);
    await new Promise((r) => setTimeout(r, 300));
    expect(browserDownloads).toEqual([]);
    await browser.page.evaluate(() => ((globalThis as any).hostDeclinesDownloads = false));
    await frame.getByLabel('Filter rows').fill('');

    // The next page: query_database again, through the host, with the offset it gave.
    await frame.getByRole('button', { name: 'Next ›' }).click();
    await expect
      .poll(() => frame.locator('.count').textContent())
      .toContain('Rows 11–20 (more exist)');
    expect(forwarded.at(-1)).toMatchObject({
      name: 'query_database',
      arguments: { query: SALES, limit: 10, offset: 10 },
    });
    expect(await rows.count()).toBe(10);
    expect(await rows.first().locator('td').first().textContent()).toBe('2024-04-01');
    await frame.getByRole('button', { name: '‹ Previous' }).click();
    await expect.poll(() => frame.locator('.count').textContent()).toContain('Rows 1–10');
    expect(forwarded.at(-1).arguments.offset).toBe(0);
  });

  it('copies no cell a spreadsheet would run as a formula, as the CSV', async () => {
    const frame = await open('query_database', {
      query: `SELECT '=HYPERLINK("http://x","y")' AS "=h", '@SUM(A1)' AS a, '-12.5' AS n, 'a=b' AS p`,
    });
    await expect.poll(() => frame.locator('table.grid tbody tr').count()).toBe(1);
    // What the Copy button hands the clipboard, recorded in the view itself.
    await frame.evaluate(() => {
      Object.defineProperty(navigator, 'clipboard', {
        configurable: true,
        value: { writeText: async (text: string) => ((globalThis as any).copied = text) },
      });
    });
    await frame.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => frame.locator('.notice').textContent()).toBe('Copied 1 row.');
    expect(await frame.evaluate(() => (globalThis as any).copied)).toBe(
      `'=h\ta\tn\tp\n'=HYPERLINK("http://x","y")\t'@SUM(A1)\t-12.5\ta=b`,
    );
  });

  it("shows a routine's rows in the grid, its categories as a bar chart", async () => {
    const frame = await open('sales_by_region', {});
    const rows = frame.locator('table.grid tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.first().locator('td').allTextContents()).toEqual(['East', '20970.00']);
    // A routine's answer is whole: nothing to page through.
    expect(await frame.getByRole('button', { name: 'Next ›' }).count()).toBe(0);
    await frame.getByRole('tab', { name: 'Chart' }).click();
    await frame.getByRole('img', { name: 'Bar chart of total by region' }).waitFor();
    expect(await frame.locator('rect').count()).toBe(3);
  });

  it.each([
    ['its own meta tag and the host', false],
    ['the host alone (meta tag stripped)', true],
  ])('blocks a request to another origin by the CSP of %s', async (_how, strip) => {
    const frame = await open('query_database', { query: SERIES }, 'light', strip);
    await expect.poll(() => frame.locator('table.grid tbody tr').count()).toBe(12);
    const metaTags = await frame.evaluate(
      () =>
        (globalThis as any).document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')
          .length,
    );
    expect(metaTags).toBe(strip ? 0 : 1);
    const outcome = await frame.evaluate(async (url) => {
      const violations: string[] = [];
      (globalThis as any).document.addEventListener('securitypolicyviolation', (e: any) =>
        violations.push(e.violatedDirective),
      );
      let fetched: string;
      try {
        fetched = await (await fetch(url)).text();
      } catch {
        fetched = 'blocked';
      }
      await new Promise((r) => setTimeout(r, 100));
      return { fetched, violations };
    }, `${outsideOrigin}/leak`);
    expect(outcome.fetched).toBe('blocked');
    expect(outcome.violations).toContain('connect-src');
    expect(outsideHits).toEqual([]);
  });

  it('shows a time series as a line chart', async () => {
    const frame = await open('query_database', { query: SERIES });
    await frame.getByRole('tab', { name: 'Chart' }).click();
    const chart = frame.getByRole('img', { name: 'Line chart of amount by month' });
    await chart.waitFor();
    expect(await frame.locator('.series-0 circle').count()).toBe(12);
    await shot('apps-result-chart');
  });

  it("follows the host's dark theme", async () => {
    const frame = await open('query_database', { query: SALES, limit: 8 }, 'dark');
    await expect.poll(() => frame.locator('table.grid tbody tr').count()).toBe(8);
    const colours = await frame.evaluate(
      'JSON.stringify([getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.querySelector("td")).color])',
    );
    // A dark background, light text.
    expect(JSON.parse(colours as string)).toEqual(['rgb(29, 32, 39)', 'rgb(231, 233, 238)']);
    await shot('apps-result-grid-dark');
  });

  it('draws the plan as a tree with the findings marked', async () => {
    const frame = await open('execute_explain', {
      query: 'SELECT kind, count(*) FROM shop.events WHERE id % 7 = 0 GROUP BY kind',
      analyze: true,
    });
    await frame.getByRole('tree', { name: 'Plan' }).waitFor();
    const labels = await frame.locator('.node-label').allTextContents();
    expect(labels[0]).toMatch(/Aggregate/);
    expect(labels.some((l) => /^Seq Scan on (shop\.)?events/.test(l))).toBe(true);
    expect(await frame.locator('.node-numbers').first().textContent()).toMatch(/cost .* ms/);
    expect(await frame.locator('.node-details').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('Filter: ((id % 7) = 0)')]),
    );
    // The analysis's finding about the scan is listed and marked on the scan's node.
    const flagged = frame.locator('.node.flagged');
    expect(await flagged.count()).toBe(1);
    expect(await flagged.locator('.node-label').first().textContent()).toMatch(/^Seq Scan/);
    expect(await flagged.locator('.node-finding').first().textContent()).toMatch(/events/);
    expect(await frame.locator('.finding.seq_scan').count()).toBe(1);
    await shot('apps-plan-viewer');
    // Nothing went wrong in any view but the refusal the CSP test asked for.
    expect(browser.problems.filter((p) => !p.includes('/leak'))).toEqual([]);
  });
});
