import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import { loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'pgmcp-npgsqlrest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function load(document: unknown, env: NodeJS.ProcessEnv = {}) {
  const path = join(dir, `appsettings-${++counter}.json`);
  writeFileSync(path, JSON.stringify(document, null, 2));
  return loadConfig({ flags: { config: path }, env, cwd: dir });
}

function failure(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected an error');
}

const block = {
  Enabled: true,
  UrlPath: '/agents/mcp',
  ServerName: 'crm',
  ServerVersion: '3.2.1',
  Instructions: 'Amounts in USD.',
  ToolDescriptionSuffix: 'Read-only Acme CRM.',
  RateLimiterPolicy: null,
  AllowedOrigins: ['https://app.example.com'],
  Authorization: {
    RequireAuthorization: true,
    AuthorizationServers: [],
    ScopesSupported: [],
    Audience: null,
    ProtectedResourceMetadataPath: null,
    FilterToolsByRole: true,
  },
};

describe("NpgsqlRest's McpOptions in a config file", () => {
  it('maps every key under NpgsqlRest: (a JSON file, as appsettings.json)', () => {
    const config = load({ NpgsqlRest: { McpOptions: block, IncludeSchemas: ['public'] } });
    expect(config.http.path).toBe('/agents/mcp');
    expect(config.server).toMatchObject({
      name: 'crm',
      version: '3.2.1',
      instructions: 'Amounts in USD.',
      toolDescriptionSuffix: 'Read-only Acme CRM.',
    });
    expect(config.http.allowedOrigins).toEqual(['https://app.example.com']);
    expect(config.auth.required).toBe(true);
    expect(config.auth.filterToolsByRole).toBe(true);
    expect(config.database.routineTools).toBe(true);
  });

  it("loads a whole appsettings.json: its own sections are NpgsqlRest's, pgmcp's keys stay checked", () => {
    const config = load({
      ConnectionStrings: { Default: 'Host=db;Database=crm;Username=app;Password=secret' },
      Log: { MinimalLevels: { NpgsqlRest: 'Information' } },
      Kestrel: { Endpoints: {} },
      NpgsqlRest: { McpOptions: block },
      http: { port: 9000 },
    });
    expect(config.http.path).toBe('/agents/mcp');
    expect(config.http.port).toBe(9000);
    expect(config.database.url).toBeNull(); // the connection string is not taken over
    const typo = failure(() => load({ NpgsqlRest: { McpOptions: block }, htp: { port: 1 } }));
    expect(typo.message).toMatch(/htp/);
    // A capitalised pgmcp section is not taken for one of ASP.NET's: it is refused, not dropped.
    const capital = failure(() =>
      load({ NpgsqlRest: { McpOptions: block }, Database: { url: 'postgres://h/db' } }),
    );
    expect(capital.message).toMatch(/Database/);
  });

  it('accepts the block at the top level, beside pgmcp sections; Enabled: false turns routine tools off', () => {
    const config = load({ database: { maxRows: 500 }, McpOptions: { Enabled: false } });
    expect(config.database.routineTools).toBe(false);
    expect(config.database.maxRows).toBe(500);
    // Null and empty values keep pgmcp's defaults; RequireAuthorization false too.
    const defaults = load({
      McpOptions: {
        ServerName: null,
        AllowedOrigins: [],
        Authorization: { RequireAuthorization: false },
      },
    });
    expect(defaults.server.name).toBeNull();
    expect(defaults.auth.required).toBeNull();
  });

  it('environment variables still win over the block', () => {
    const config = load(
      { McpOptions: { ServerVersion: '1.0.0' } },
      { PGMCP_SERVER_VERSION: '9.9.9' },
    );
    expect(config.server.version).toBe('9.9.9');
  });

  it('refuses what pgmcp cannot honour, unknown keys, and a key set both ways', () => {
    const audience = failure(() =>
      load({ McpOptions: { Authorization: { Audience: 'https://x/mcp' } } }),
    );
    expect(audience.code).toBe(ErrorCodes.CONFIG_FOREIGN_UNSUPPORTED);
    expect(audience.message).toContain('McpOptions.Authorization.Audience');
    const policy = failure(() => load({ McpOptions: { RateLimiterPolicy: 'mcp' } }));
    expect(policy.message).toContain('rateLimit.requestsPerMinute');
    const typo = failure(() => load({ McpOptions: { UrlPth: '/x' } }));
    expect(typo.message).toContain('McpOptions.UrlPth');
    const twice = failure(() => load({ http: { path: '/a' }, McpOptions: { UrlPath: '/b' } }));
    expect(twice.code).toBe(ErrorCodes.CONFIG_FOREIGN_CONFLICT);
  });

  it('names the block as the source of a bad value', () => {
    const bad = failure(() => load({ McpOptions: { UrlPath: 'no-slash' } }));
    expect(bad.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(bad.message).toContain('McpOptions.UrlPath');
  });
});
