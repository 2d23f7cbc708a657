// database.directUrl / databases[].directUrl: the server without a pooler, for the catalog
// watch's LISTEN. It names one server, so an entry never inherits the section's; an entry's
// password goes into it as into its url; --print-config masks it like every URL.
import { describe, expect, it } from 'vitest';
import { resolveDatabases } from './databases.js';
import { redactConfig } from './redact.js';
import { configSchema } from './schema.js';

describe('directUrl', () => {
  it('the single database takes database.directUrl', () => {
    const config = configSchema.parse({
      database: {
        url: 'postgres://u:pw@pooler:6432/db',
        directUrl: 'postgres://u:pw@primary:5432/db',
      },
    });
    const [db] = resolveDatabases(config, { env: {} });
    expect(db!.directUrl).toBe('postgres://u:pw@primary:5432/db');
  });

  it('none for the embedded database, and none by default', () => {
    expect(resolveDatabases(configSchema.parse({}), { env: {} })[0]!.directUrl).toBeNull();
    const config = configSchema.parse({ database: { url: 'postgres://u@h/db' } });
    expect(resolveDatabases(config, { env: {} })[0]!.directUrl).toBeNull();
  });

  it("an entry's own, with the entry's password, never the section's", () => {
    const config = configSchema.parse({
      database: { directUrl: 'postgres://u@elsewhere/db' },
      databases: [
        {
          name: 'a',
          url: 'postgres://alice@pooler:6432/shop',
          directUrl: 'postgres://alice@primary:5432/shop',
          passwordEnv: 'A_PASSWORD',
        },
        { name: 'b', url: 'postgres://bob@h/b' },
      ],
    });
    const [a, b] = resolveDatabases(config, { env: { A_PASSWORD: 'p@ss' } });
    expect(a!.directUrl).toBe('postgres://alice:p%40ss@primary:5432/shop');
    expect(b!.directUrl).toBeNull();
  });

  it('refuses a directUrl that is no postgres:// URL, naming the key', () => {
    const result = configSchema.safeParse({ database: { directUrl: 'mysql://h/db' } });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues.map((i) => i.path))).toContain('directUrl');
  });

  it('is masked by --print-config', () => {
    const config = configSchema.parse({
      database: { url: 'postgres://u:hunter2@p/db', directUrl: 'postgres://u:hunter2@d/db' },
      databases: [
        { name: 'a', url: 'postgres://u:hunter2@p/a', directUrl: 'postgres://u:hunter2@d/a' },
      ],
    });
    const redacted = JSON.stringify(redactConfig(config));
    expect(redacted).not.toContain('hunter2');
    expect(redacted).toContain('postgres://u:****@d/db');
    expect(redacted).toContain('postgres://u:****@d/a');
  });
});
