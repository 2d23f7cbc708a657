// database.readReplicas / databases[].readReplicas: standbys for read-only calls; each URL is
// checked like database.url, multi-host allowed; an entry never inherits the top-level list;
// --print-config redacts their passwords.
import { describe, expect, it } from 'vitest';
import { resolveDatabases } from './databases.js';
import { readEnv } from './env.js';
import { redactConfig } from './redact.js';
import { configSchema } from './schema.js';

const load = (file: Record<string, unknown>) => configSchema.parse(file);

describe('read replicas settings', () => {
  it('takes a list of URLs, multi-host allowed, and the two durations', () => {
    const config = load({
      database: {
        url: 'postgres://app@p:5432/db',
        readReplicas: ['postgres://r@s1:5432,s2:5433/db?target_session_attrs=standby'],
        replicaMaxLagMs: 250,
        readYourWritesMs: 0,
      },
    });
    const [db] = resolveDatabases(config, { env: {} });
    expect(db!.readReplicas).toEqual([
      'postgres://r@s1:5432,s2:5433/db?target_session_attrs=standby',
    ]);
    expect(db!.replicaMaxLagMs).toBe(250);
    expect(db!.readYourWritesMs).toBe(0);
  });

  it('refuses a URL that is not one, naming the key', () => {
    const parsed = configSchema.safeParse({ database: { readReplicas: ['mysql://x/y'] } });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]).toMatchObject({
      path: ['database', 'readReplicas', 0],
      message: expect.stringMatching(/postgres:\/\//) as unknown,
    });
  });

  it('an entry uses its own list, never the top-level one', () => {
    const config = load({
      database: { readReplicas: ['postgres://r@top:5432/db'], replicaMaxLagMs: 100 },
      databases: [
        { name: 'a', url: 'postgres://app@a:5432/db' },
        { name: 'b', url: 'postgres://app@b:5432/db', readReplicas: ['postgres://r@b2:5432/db'] },
      ],
    });
    const [a, b] = resolveDatabases(config, { env: {} });
    expect(a!.readReplicas).toEqual([]);
    expect(a!.replicaMaxLagMs).toBe(100);
    expect(b!.readReplicas).toEqual(['postgres://r@b2:5432/db']);
  });

  it('PGMCP_READ_REPLICAS takes URLs separated by spaces (a multi-host URL keeps its commas)', () => {
    const env = readEnv({
      PGMCP_READ_REPLICAS: 'postgres://r@s1:5432,s2:5432/db  postgres://r@s3:5432/db',
    });
    expect(env).toContainEqual({
      key: 'database.readReplicas',
      value: ['postgres://r@s1:5432,s2:5432/db', 'postgres://r@s3:5432/db'],
      source: 'PGMCP_READ_REPLICAS',
    });
  });

  it('--print-config hides their passwords', () => {
    const config = load({
      database: {
        readReplicas: ['postgres://r:sekret@s1:5432/db'],
      },
      databases: [
        { name: 'b', url: 'postgres://app@b:5432/db', readReplicas: ['postgres://r:hush@b2/db'] },
      ],
    });
    const shown = JSON.stringify(redactConfig(config));
    expect(shown).not.toMatch(/sekret|hush/);
    expect(shown).toContain('s1:5432');
  });
});
