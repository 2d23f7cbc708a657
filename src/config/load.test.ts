import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { ConfigFlags } from './flags.js';
import { loadConfig } from './load.js';
import { configSchema } from './schema.js';

const dir = mkdtempSync(join(tmpdir(), 'pgmcp-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function file(text: string): string {
  const path = join(dir, `config-${++counter}.yaml`);
  writeFileSync(path, text);
  return path;
}

function load(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = {}) {
  return loadConfig({ flags, env, cwd: '/srv/app' });
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

describe('loadConfig defaults', () => {
  it('returns every default with dataDir made absolute', () => {
    const config = load();
    expect(config).toEqual({
      server: {
        name: null,
        version: null,
        instructions: null,
        toolDescriptionSuffix: null,
        stateSecret: null,
        databaseTools: false,
        shutdownTimeoutMs: 10000,
      },
      transport: 'http',
      http: {
        host: '127.0.0.1',
        port: 8080,
        path: '/mcp',
        allowedOrigins: [],
        allowedHosts: [],
        bodyLimitBytes: 4194304,
        sessionIdleTimeoutMs: 1800000,
        eventStoreSize: 1000,
        keepAliveMs: 15000,
        drainMs: 0,
        requestTimeoutMs: 30000,
        maxConnections: 1024,
        tls: { cert: null, key: null },
        cors: { origins: [] },
      },
      database: {
        url: null,
        directUrl: null,
        readReplicas: [],
        replicaMaxLagMs: 5000,
        readYourWritesMs: 5000,
        allowWrites: false,
        statementTimeoutMs: 30000,
        maxRows: 1000,
        defaultRows: 100,
        maxResultBytes: 1048576,
        poolSize: 10,
        queueLimit: 100,
        queueTimeoutMs: 10000,
        connectTimeoutMs: 10000,
        idleTimeoutMs: 30000,
        access: {
          allowSchemas: [],
          denySchemas: [],
          allowTables: [],
          denyTables: [],
          denyColumns: [],
          maskColumns: [],
          allowFunctions: [],
          allowMaskedPredicates: false,
        },
        deniedFunctions: [],
        maxPlanCost: null,
        maxPlanRows: null,
        showQueryText: false,
        role: null,
        routineSchemas: [],
        routineTools: true,
        exchangeLog: { enabled: true, logArguments: false },
      },
      databases: [],
      embedded: { dataDir: '/srv/app/.pgmcp/data', demo: true },
      embeddings: configSchema.parse({}).embeddings,
      llm: {
        default: null,
        providers: {},
        fromEnv: true,
        systemPrompt: null,
        maxToolRounds: 10,
        maxOutputTokens: 4096,
        maxTokensPerRequest: 200_000,
        maxSameFailures: 3,
        maxToolResultChars: 20_000,
        contextTokens: 128_000,
        compactAt: 0.8,
        timeoutMs: 120_000,
        maxRetries: 2,
      },
      state: { url: null },
      auth: {
        required: null,
        filterToolsByRole: false,
        trustedProxies: [],
        proxyHeaders: { userId: 'x-user-id', tenantId: 'x-tenant-id', roles: null },
        stdio: { userId: null, tenantId: null, roles: [], pgRole: null },
        sessionTtlSeconds: 86_400,
        cacheTtlMs: 5_000,
        lockout: {
          maxFailures: 5,
          maxFailuresPerAddress: 20,
          windowSeconds: 900,
          lockSeconds: 900,
        },
        oauth: configSchema.parse({}).auth.oauth,
      },
      audit: { database: true, file: null },
      tools: {},
      registry: { mode: 'auto' },
      telemetry: { otlpEndpoint: null, includeSql: false, sqlComment: false },
      log: { level: 'info' },
      metrics: { enabled: false, listen: null, allowAnonymous: false },
      rateLimit: {
        requestsPerMinute: null,
        routes: {},
        redis: null,
        redisKeyPrefix: 'pgmcp:ratelimit:',
      },
      cluster: { redis: null, redisKeyPrefix: 'pgmcp:cluster:' },
      tasks: {
        maxTtlMs: 3_600_000,
        maxRunningPerCaller: 4,
        maxStoredPerCaller: 100,
        heartbeatIntervalMs: 5_000,
        sweepIntervalMs: 60_000,
      },
    });
  });

  it('resolves dataDir from any source against cwd, and keeps absolute ones', () => {
    expect(load({ dataDir: 'x/y' }).embedded.dataDir).toBe('/srv/app/x/y');
    expect(load({}, { PGMCP_DATA_DIR: '/var/lib/pgmcp' }).embedded.dataDir).toBe('/var/lib/pgmcp');
  });
});

describe('precedence: flags > env > file > defaults', () => {
  // Each setting is given by some subset of the three sources; the highest present wins.
  const cases = [
    {
      key: 'log.level',
      file: 'log:\n  level: warn\n',
      env: { PGMCP_LOG_LEVEL: 'error' },
      flags: { logLevel: 'debug' },
      values: { file: 'warn', env: 'error', flags: 'debug', none: 'info' },
      read: (c: ReturnType<typeof load>) => c.log.level,
    },
    {
      key: 'http.port',
      file: 'http:\n  port: 1111\n',
      env: { PGMCP_HTTP_PORT: '2222' },
      flags: { http: '3333' },
      values: { file: 1111, env: 2222, flags: 3333, none: 8080 },
      read: (c: ReturnType<typeof load>) => c.http.port,
    },
    {
      key: 'database.url',
      file: 'database:\n  url: postgres://file/db\n',
      env: { DATABASE_URL: 'postgres://env/db' },
      flags: { database: 'postgres://flag/db' },
      values: {
        file: 'postgres://file/db',
        env: 'postgres://env/db',
        flags: 'postgres://flag/db',
        none: null,
      },
      read: (c: ReturnType<typeof load>) => c.database.url,
    },
    {
      key: 'database.allowWrites',
      file: 'database:\n  allowWrites: true\n',
      env: { PGMCP_ALLOW_WRITES: 'no' },
      flags: { allowWrites: true },
      values: { file: true, env: false, flags: true, none: false },
      read: (c: ReturnType<typeof load>) => c.database.allowWrites,
    },
  ];
  const combos = [0, 1, 2, 3, 4, 5, 6, 7].map((bits) => ({
    file: (bits & 1) !== 0,
    env: (bits & 2) !== 0,
    flags: (bits & 4) !== 0,
  }));

  for (const c of cases) {
    for (const combo of combos) {
      const winner = combo.flags ? 'flags' : combo.env ? 'env' : combo.file ? 'file' : 'none';
      const label = Object.entries(combo)
        .filter(([, on]) => on)
        .map(([name]) => name)
        .join('+');
      it(`${c.key} from ${label || 'nothing'} → ${winner}`, () => {
        const env: NodeJS.ProcessEnv = combo.env ? { ...c.env } : {};
        const flags: ConfigFlags = combo.flags ? { ...c.flags } : {};
        if (combo.file) flags.config = file(c.file);
        expect(c.read(load(flags, env))).toBe(c.values[winner]);
      });
    }
  }

  it('merges per key, so a file and env can each set different keys of one section', () => {
    const config = load(
      { config: file('http:\n  host: 0.0.0.0\n  path: /x\n') },
      { PGMCP_HTTP_PORT: '9' },
    );
    expect(config.http).toMatchObject({ host: '0.0.0.0', path: '/x', port: 9 });
  });

  it('--http without a host keeps the host from lower sources', () => {
    const config = load({ http: '9000' }, { PGMCP_HTTP_HOST: '0.0.0.0', PGMCP_TRANSPORT: 'stdio' });
    expect(config).toMatchObject({ transport: 'http', http: { host: '0.0.0.0', port: 9000 } });
  });

  it('--stdio overrides the transport from env and file', () => {
    const path = file('transport: http\n');
    expect(load({ stdio: true, config: path }, { PGMCP_TRANSPORT: 'http' }).transport).toBe(
      'stdio',
    );
  });

  it('PGMCP_DATABASE_URL beats DATABASE_URL, which beats the PG* variables', () => {
    const env = {
      PGMCP_DATABASE_URL: 'postgres://a/1',
      DATABASE_URL: 'postgres://b/2',
      PGHOST: 'c',
    };
    expect(load({}, env).database.url).toBe('postgres://a/1');
    expect(load({}, { ...env, PGMCP_DATABASE_URL: '' }).database.url).toBe('postgres://b/2');
    expect(load({}, { PGHOST: 'c', PGDATABASE: 'd' }).database.url).toBe('postgres://c/d');
  });

  it('--config wins over PGMCP_CONFIG, and a relative path is resolved against cwd', () => {
    const chosen = file('log:\n  level: warn\n');
    const other = file('log:\n  level: error\n');
    expect(load({ config: chosen }, { PGMCP_CONFIG: other }).log.level).toBe('warn');
    expect(load({}, { PGMCP_CONFIG: other }).log.level).toBe('error');
    const relative = loadConfig({ flags: { config: 'config-2.yaml' }, env: {}, cwd: dir });
    expect(relative.log).toBeDefined();
  });

  it('reads every key of a full file', () => {
    const path = file(
      [
        'server:',
        '  name: shop',
        '  version: 2.1.0',
        '  instructions: Use read-only SQL.',
        '  toolDescriptionSuffix: (shop db)',
        '  stateSecret: 0123456789abcdef',
        'transport: stdio',
        'http:',
        '  allowedOrigins: [https://app.example.com, "*"]',
        '  allowedHosts: [mcp.example.com, "mcp.example.com:8443", "[::1]:80"]',
        '  keepAliveMs: 0',
        'database:',
        '  maxRows: 50',
        '  defaultRows: 50',
        'embedded:',
        '  demo: false',
        'log:',
      ].join('\n'),
    );
    const config = load({ config: path });
    expect(config.server).toEqual({
      name: 'shop',
      version: '2.1.0',
      instructions: 'Use read-only SQL.',
      toolDescriptionSuffix: '(shop db)',
      stateSecret: '0123456789abcdef',
      databaseTools: false,
      shutdownTimeoutMs: 10000,
    });
    expect(config.transport).toBe('stdio');
    expect(config.http.allowedOrigins).toEqual(['https://app.example.com', '*']);
    expect(config.http.allowedHosts).toHaveLength(3);
    expect(config.http.keepAliveMs).toBe(0);
    expect(config.embedded.demo).toBe(false);
    expect(config.log.level).toBe('info');
  });

  it('treats an empty file as no file', () => {
    expect(load({ config: file('') }).http.port).toBe(8080);
    expect(load({ config: file('# only a comment\n') }).http.port).toBe(8080);
  });
});

describe('file errors', () => {
  it('reports a missing file with its path and the flag or variable that named it', () => {
    const missing = join(dir, 'nope.yaml');
    const error = failure(() => load({ config: missing }));
    expect(error.code).toBe(ErrorCodes.CONFIG_FILE_UNREADABLE);
    expect(error.message).toBe(`cannot read config file ${missing} (from --config): no such file`);
    expect(failure(() => load({}, { PGMCP_CONFIG: missing })).message).toContain(
      '(from PGMCP_CONFIG)',
    );
  });

  it('reports a directory', () => {
    expect(failure(() => load({ config: dir })).message).toContain('it is a directory');
  });

  it('reports bad YAML with the line and column, without echoing the line', () => {
    // yaml's own message would quote line 2, password included.
    const path = file('database:\n  url: postgres://u:hunter2@h/db\n   bad: x\n');
    const error = failure(() => load({ config: path }));
    expect(error.code).toBe(ErrorCodes.CONFIG_FILE_UNREADABLE);
    expect(error.message).toBe(
      `config file ${path} is not valid YAML at line 2, column 8: Nested mappings are not allowed in compact mappings`,
    );
    expect(error.message).not.toContain('hunter2');
    expect(error.cause).toBeUndefined();
  });

  it('reports duplicate keys as bad YAML', () => {
    const error = failure(() => load({ config: file('log:\n  level: info\n  level: warn\n') }));
    expect(error.code).toBe(ErrorCodes.CONFIG_FILE_UNREADABLE);
    expect(error.message).toContain('line 3');
  });

  it('rejects a top level that is not a mapping', () => {
    const error = failure(() => load({ config: file('- a\n- b\n') }));
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.message).toContain('expected a mapping of sections');
  });

  it('rejects unknown keys by name and lists the valid ones', () => {
    const path = file('http:\n  prot: 80\n  hots: x\n');
    const error = failure(() => load({ config: path }));
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.details).toEqual({ key: 'http', source: path });
    expect(error.message).toBe(
      `http: unknown keys "prot", "hots" (valid keys: host, port, path, allowedOrigins, allowedHosts, ` +
        `bodyLimitBytes, sessionIdleTimeoutMs, eventStoreSize, keepAliveMs, drainMs, requestTimeoutMs, maxConnections, tls, cors) (from ${path})`,
    );
  });

  it('rejects an unknown top-level key, such as snake_case spellings', () => {
    const path = file('databse:\n  url: postgres://h/db\n');
    const error = failure(() => load({ config: path }));
    expect(error.message).toMatch(
      /^unknown top-level key "databse" \(valid keys: server, transport, http,/,
    );
    expect(failure(() => load({ config: file('database:\n  max_rows: 5\n') })).message).toContain(
      'database: unknown key "max_rows"',
    );
  });

  it('has no server.conformance any more (the fixtures live in the test-only fixture server)', () => {
    const path = file('server:\n  conformance: true\n');
    expect(failure(() => load({ config: path })).message).toContain(
      'server: unknown key "conformance"',
    );
  });

  it('rejects a section that is not a mapping', () => {
    const path = file('http: 8080\n');
    expect(failure(() => load({ config: path }, { PGMCP_HTTP_HOST: 'h' })).message).toBe(
      `http: expected a mapping of keys to values, got 8080 (from ${path})`,
    );
  });
});

describe('edge settings: TLS, CORS, rate limits', () => {
  it('takes the TLS files from the flags, env or file, resolved against cwd', () => {
    const byFlags = load({ tlsCert: 'certs/cert.pem', tlsKey: '/etc/pgmcp/key.pem' });
    expect(byFlags.http.tls).toEqual({
      cert: '/srv/app/certs/cert.pem',
      key: '/etc/pgmcp/key.pem',
    });
    const byEnv = load({}, { PGMCP_HTTP_TLS_CERT: 'c.pem', PGMCP_HTTP_TLS_KEY: 'k.pem' });
    expect(byEnv.http.tls).toEqual({ cert: '/srv/app/c.pem', key: '/srv/app/k.pem' });
    const path = file('http:\n  tls:\n    cert: /a/c.pem\n    key: /a/k.pem\n');
    expect(load({ config: path }).http.tls).toEqual({ cert: '/a/c.pem', key: '/a/k.pem' });
  });

  it('refuses a certificate without a key, naming the flag', () => {
    const error = failure(() => load({ tlsCert: 'c.pem' }));
    expect(error.message).toBe(
      'http.tls.key: expected a file: http.tls.cert and http.tls.key are given together',
    );
  });

  it('reads CORS origins as a list and checks each one', () => {
    const config = load(
      {},
      { PGMCP_HTTP_CORS_ORIGINS: 'https://a.example, http://localhost:5173' },
    );
    expect(config.http.cors.origins).toEqual(['https://a.example', 'http://localhost:5173']);
    expect(
      failure(() => load({}, { PGMCP_HTTP_CORS_ORIGINS: 'https://a.example/' })).message,
    ).toMatch(/^http\.cors\.origins\[0\]: expected an origin/);
  });

  it('reads rate limits from the file and env, per route family', () => {
    const path = file(
      'rateLimit:\n  requestsPerMinute: 600\n  routes:\n    api: 120\n    api.login: 10\n',
    );
    const config = load({ config: path }, { PGMCP_RATE_LIMIT_MCP: '300' });
    expect(config.rateLimit).toEqual({
      requestsPerMinute: 600,
      routes: { api: 120, 'api.login': 10, mcp: 300 },
      redis: null,
      redisKeyPrefix: 'pgmcp:ratelimit:',
    });
    expect(load({}, { PGMCP_RATE_LIMIT_PER_MINUTE: '60' }).rateLimit.requestsPerMinute).toBe(60);
  });

  it('refuses unknown route families, bad limits and non-Redis URLs', () => {
    const badFamily = file('rateLimit:\n  routes:\n    web: 5\n');
    expect(failure(() => load({ config: badFamily })).message).toMatch(/route family/);
    expect(failure(() => load({}, { PGMCP_RATE_LIMIT_PER_MINUTE: '0' })).message).toMatch(
      /^rateLimit\.requestsPerMinute: expected a positive integer/,
    );
    const error = failure(() => load({}, { PGMCP_RATE_LIMIT_REDIS: 'http://u:secret@h' }));
    expect(error.message).toMatch(/^rateLimit\.redis: expected a URL starting with redis:\/\//);
    // The Redis URL may carry a password: never echoed.
    expect(error.message).not.toContain('secret');
  });
});
