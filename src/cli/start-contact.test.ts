// The first contact's reason, from the real pool against ports nothing listens on (no
// PostgreSQL needed): one host, and several (libpq's multi-host URL), never the password.
import { createServer, type AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../db/database.js';
import { firstContact, unreachableLines } from './start-contact.js';

const SECRET = 'hunter2-first-contact';
const opened: Database[] = [];
afterAll(() => Promise.all(opened.map((db) => db.close())));

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function contact(url: string) {
  const db = await createDatabase(
    {
      url,
      poolSize: 1,
      connectTimeoutMs: 2_000,
      embedded: { dataDir: '/nonexistent', demo: false },
    },
    pino({ level: 'silent' }),
  );
  opened.push(db);
  return firstContact(db, 'pgmcp');
}

describe('firstContact', () => {
  it('one host refusing: connection refused, the state schema assumed present', async () => {
    const result = await contact(`postgres://u:${SECRET}@127.0.0.1:${await closedPort()}/app`);
    expect(result).toEqual({ holdsState: true, unreachable: 'connection refused (ECONNREFUSED)' });
  });

  it('several hosts refusing: each named with its reason, without the password', async () => {
    const [a, b] = [await closedPort(), await closedPort()];
    const result = await contact(`postgres://u:${SECRET}@127.0.0.1:${a},127.0.0.1:${b}/app`);
    expect(result.unreachable).toBe(
      `no host (127.0.0.1:${a}: connection refused (ECONNREFUSED); 127.0.0.1:${b}: connection refused (ECONNREFUSED))`,
    );
    const [line] = unreachableLines([
      { database: 'app', reason: result.unreachable!, entry: false },
    ]);
    expect(line).toMatch(/^warning: database app cannot be reached now: no host \(/);
    expect(line).not.toContain(SECRET);
  });
});
