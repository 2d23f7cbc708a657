import { describe, expect, it } from 'vitest';
import { redactConfig, redactUrl } from './redact.js';
import { configSchema } from './schema.js';

describe('redactUrl', () => {
  it.each([
    ['postgres://u:secret@h/db', 'postgres://u:****@h/db'],
    [
      'postgresql://u:secret@h:5432/db?sslmode=require',
      'postgresql://u:****@h:5432/db?sslmode=require',
    ],
    ['postgres://u:p@ss/w@rd@h/db', 'postgres://u:****@h/db'],
    [
      'postgres://h/db?user=u&password=secret&sslmode=require',
      'postgres://h/db?user=u&password=****&sslmode=require',
    ],
    ['postgres://h/db?PASSWORD=secret', 'postgres://h/db?PASSWORD=****'],
    ['postgres://h/db?sslpassword=k3y', 'postgres://h/db?sslpassword=****'],
    ['postgres://u:a@h/db?password=b', 'postgres://u:****@h/db?password=****'],
    ["host=h password='s p' dbname=d", 'host=h password=**** dbname=d'],
  ])('%s', (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });

  it('leaves URLs without a password alone', () => {
    for (const url of [
      'postgres://u@h/db',
      'postgres://h/db',
      'postgres:///db?host=%2Ftmp',
      'postgres://h/a@b',
    ]) {
      expect(redactUrl(url)).toBe(url);
    }
  });
});

describe('redactConfig', () => {
  it('masks the url password and the state secret, and leaves the input untouched', () => {
    const config = configSchema.parse({
      server: { stateSecret: 'very-secret-key' },
      database: { url: 'postgres://u:hunter2@h/db' },
      http: { allowedOrigins: ['https://a.example'] },
    });
    const redacted = redactConfig(config) as typeof config;
    expect(redacted.server.stateSecret).toBe('****');
    expect(redacted.database.url).toBe('postgres://u:****@h/db');
    expect(JSON.stringify(redacted)).not.toMatch(/hunter2|very-secret-key/);
    expect(redacted.http).toEqual(config.http);
    expect(config.database.url).toBe('postgres://u:hunter2@h/db');
    expect(config.server.stateSecret).toBe('very-secret-key');
  });

  it('masks the password of the rate-limit Redis URL, keeping where it points', () => {
    const config = configSchema.parse({
      rateLimit: { redis: 'redis://:hunter2@cache.internal:6379/0', routes: { mcp: 5 } },
    });
    const redacted = redactConfig(config) as typeof config;
    expect(redacted.rateLimit.redis).toBe('redis://:****@cache.internal:6379/0');
    expect(redacted.rateLimit.routes).toEqual({ mcp: 5 });
    expect(config.rateLimit.redis).toBe('redis://:hunter2@cache.internal:6379/0');
  });

  it('masks the password of the cluster Redis URL', () => {
    const config = configSchema.parse({
      cluster: { redis: 'redis://:hunter2@cache.internal:6379/1' },
    });
    const redacted = redactConfig(config) as typeof config;
    expect(redacted.cluster).toEqual({
      redis: 'redis://:****@cache.internal:6379/1',
      redisKeyPrefix: 'pgmcp:cluster:',
    });
    expect(config.cluster.redis).toBe('redis://:hunter2@cache.internal:6379/1');
  });

  it('keeps nulls as nulls', () => {
    const redacted = redactConfig(configSchema.parse({})) as {
      server: { stateSecret: unknown };
      database: { url: unknown };
    };
    expect(redacted.server.stateSecret).toBeNull();
    expect(redacted.database.url).toBeNull();
  });
});

describe('redactConfig and the state database', () => {
  it('masks the password of state.url', () => {
    const config = configSchema.parse({ state: { url: 'postgres://u:hunter2@h/state' } });
    const redacted = redactConfig(config) as typeof config;
    expect(redacted.state.url).toBe('postgres://u:****@h/state');
    expect(JSON.stringify(redacted)).not.toContain('hunter2');
  });
});
