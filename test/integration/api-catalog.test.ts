// GET /api/tools, /api/resources, /api/prompts and /api/tables through the composition `serve
// --http` and `pgmcp chat` use (createApp + openHttpService), on real PostgreSQL, with real
// tokens: each caller sees only what it may use, and the routes are in /api/openapi.json.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createApp, type App } from '../../src/cli/app.js';
import { openHttpService, type HttpService } from '../../src/cli/http-service.js';
import { loadConfig } from '../../src/config/index.js';
import {
  createFixtureSchema,
  realPostgres,
  throwawayDatabase,
  type FixtureSchema,
} from '../helpers/postgres.js';

const pg = await realPostgres('/api catalog views');

describe.skipIf(!pg)('/api/tools, /api/resources, /api/prompts, /api/tables', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_api_catalog');
  let dir: string;
  let fixture: FixtureSchema;
  let app: App;
  let service: HttpService;
  let origin: string;
  let plain: string;
  let analyst: string;

  beforeAll(async () => {
    fixture = await createFixtureSchema(pg!, 'pgmcp_apicat');
    dir = mkdtempSync(join(tmpdir(), 'pgmcp-api-catalog-'));
    const file = join(dir, 'pgmcp.yaml');
    writeFileSync(
      file,
      YAML.stringify({
        state: { url: state.url },
        tools: { query_database: { roles: ['analyst'] } },
      }),
    );
    const config = loadConfig({
      flags: { config: file, database: pg!.url, http: '127.0.0.1:0', requireAuth: true },
      env: {},
      cwd: dir,
    });
    const logger = pino({ level: 'silent' });
    app = await createApp(config, logger);
    service = await openHttpService(config, app, logger);
    origin = `http://127.0.0.1:${(await service.http.listen()).port}`;
    plain = (await service.auth.tokens.create({ name: 'plain', expiresInSeconds: 600 })).token;
    analyst = (
      await service.auth.tokens.create({
        name: 'analyst',
        expiresInSeconds: 600,
        roles: ['analyst'],
      })
    ).token;
  });
  afterAll(async () => {
    await service?.close();
    await app?.close();
    await fixture?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const get = async (path: string, token?: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${origin}${path}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: res.status, body: await res.json() };
  };

  it('lists only the tools the caller may call', async () => {
    const names = (r: { body: { tools: { name: string }[] } }): string[] =>
      r.body.tools.map((t) => t.name);
    const forPlain = await get('/api/tools', plain);
    expect(forPlain.status).toBe(200);
    expect(names(forPlain)).toContain('get_schema_info');
    expect(names(forPlain)).not.toContain('query_database');
    const forAnalyst = await get('/api/tools', analyst);
    expect(names(forAnalyst)).toContain('query_database');
    const tool = forAnalyst.body.tools.find((t: { name: string }) => t.name === 'query_database');
    expect(typeof tool.description).toBe('string');
    // A view, not the spec: no schemas, no functions.
    expect(Object.keys(tool).every((k) => ['name', 'title', 'description'].includes(k))).toBe(true);
  });

  it('lists resources with templates, and prompts with their arguments', async () => {
    const resources = await get('/api/resources', plain);
    expect(resources.status).toBe(200);
    expect(Array.isArray(resources.body.resources)).toBe(true);
    expect(resources.body.templates.map((t: { uriTemplate: string }) => t.uriTemplate)).toContain(
      'pg://table/{schema}/{table}',
    );
    const prompts = await get('/api/prompts', plain);
    expect(prompts.status).toBe(200);
    for (const prompt of prompts.body.prompts) expect(Array.isArray(prompt.arguments)).toBe(true);
  });

  it('names the tables the caller can see, for completion', async () => {
    const tables = await get('/api/tables', plain);
    expect(tables.status).toBe(200);
    expect(tables.body.tables).toEqual(expect.arrayContaining(['items', 'tags']));
  });

  it('refuses anonymous callers and describes the routes in /api/openapi.json', async () => {
    expect((await get('/api/tools')).status).toBe(401);
    const doc = await get('/api/openapi.json', plain);
    for (const path of ['/api/tools', '/api/resources', '/api/prompts', '/api/tables']) {
      expect(doc.body.paths[path]?.get?.responses?.['200']).toBeDefined();
    }
  });
});
