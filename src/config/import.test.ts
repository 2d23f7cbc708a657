import { describe, expect, it } from 'vitest';
import { ErrorCodes, type AppError } from '../core/errors.js';
import { importConfig } from './import.js';
import { configSchema } from './schema.js';

const PGEDGE = `
http:
  enabled: true
  address: ":8080"
  tls:
    enabled: true
    cert_file: /etc/pgedge/server.crt
    key_file: /etc/pgedge/server.key
  auth:
    enabled: true
    token_file: /etc/pgedge/postgres-mcp-tokens.yaml
    max_failed_attempts_before_lockout: 5
    rate_limit_window_minutes: 15
    rate_limit_max_attempts: 10
  allowed_origins: ["https://chat.example.com"]
databases:
  - name: production
    host: db.example.com
    port: 5432
    database: myapp
    user: appuser
    password: "enc:abcdef"
    sslmode: require
    allow_writes: false
    available_to_users: [alice]
    pool_max_conns: 8
    metadata_ttl: 5m
llm:
  enabled: true
  provider: anthropic
embedding:
  enabled: true
  provider: openai
  model: text-embedding-3-small
  openai_api_key: sk-secret
`;

describe('pgmcp config import', () => {
  it('converts a pgEdge postgres-mcp.yaml and lists what does not carry over', () => {
    const { config, unmapped } = importConfig('pgedge', PGEDGE, 'postgres-mcp.yaml');
    expect(config).toMatchObject({
      transport: 'http',
      http: {
        host: '0.0.0.0',
        port: 8080,
        allowedOrigins: ['https://chat.example.com'],
        tls: { cert: '/etc/pgedge/server.crt', key: '/etc/pgedge/server.key' },
      },
      auth: {
        required: true,
        lockout: { maxFailures: 5, windowSeconds: 900, maxFailuresPerAddress: 10 },
      },
      databases: [
        {
          name: 'production',
          host: 'db.example.com',
          port: 5432,
          database: 'myapp',
          user: 'appuser',
          sslmode: 'require',
          allowWrites: false,
          availableToUsers: ['alice'],
          poolSize: 8,
        },
      ],
      embeddings: { provider: 'openai', openai: { model: 'text-embedding-3-small' } },
    });
    const keys = unmapped.map((u) => u.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'http.auth.token_file',
        'databases[0].password',
        'databases[0].metadata_ttl',
        'llm.enabled',
        'embedding.openai_api_key',
      ]),
    );
    // Secrets never travel into the output.
    expect(JSON.stringify(config)).not.toContain('sk-secret');
    expect(JSON.stringify(config)).not.toContain('enc:abcdef');
    expect(configSchema.safeParse(config).success).toBe(true);
  });

  it('converts an NpgsqlRest appsettings.json: McpOptions and the default connection', () => {
    const appsettings = JSON.stringify({
      ConnectionStrings: {
        Default: 'Host=localhost;Port=5433;Database=crm;Username=api;Password=pw',
      },
      NpgsqlRest: {
        IncludeSchemas: ['public'],
        McpOptions: {
          Enabled: true,
          UrlPath: '/mcp',
          ServerVersion: '2.0.0',
          RateLimiterPolicy: 'mcp',
        },
      },
      Log: { MinimalLevels: {} },
    });
    const { config, unmapped } = importConfig('npgsqlrest', appsettings, 'appsettings.json');
    expect(config).toEqual({
      database: { routineTools: true },
      http: { path: '/mcp' },
      server: { version: '2.0.0' },
      databases: [{ name: 'default', host: 'localhost', port: 5433, database: 'crm', user: 'api' }],
    });
    expect(JSON.stringify(config)).not.toContain('pw');
    expect(unmapped.map((u) => u.key)).toEqual(
      expect.arrayContaining([
        'NpgsqlRest.McpOptions.RateLimiterPolicy',
        'NpgsqlRest.IncludeSchemas',
        'Log',
        'ConnectionStrings.Default (Password)',
      ]),
    );
  });

  it('refuses a file that is not a mapping, or converts to something pgmcp rejects', () => {
    const notMapping = (() => {
      try {
        importConfig('pgedge', '- a\n- b\n', 'x.yaml');
      } catch (e) {
        return e as AppError;
      }
      return null;
    })();
    expect(notMapping?.code).toBe(ErrorCodes.CONFIG_IMPORT_FAILED);
    expect(() => importConfig('pgedge', 'http:\n  address: ":99999"\n', 'x.yaml')).toThrow(
      /http\.port/,
    );
    // Where the YAML breaks, as one sentence (the parser's own text ends with a colon).
    expect(() => importConfig('pgedge', 'llm:\n  provider: x\n bad: [\n', 'x.yaml')).toThrow(
      /^x\.yaml is not valid YAML: .* at line 3, column 1$/,
    );
  });
});
