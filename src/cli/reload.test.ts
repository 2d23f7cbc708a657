import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { configSchema, resolveDatabases, type Config } from '../config/index.js';
import { changedKeys, reloadConfig } from './reload.js';

describe('changedKeys', () => {
  it('names the leaves that differ, by dotted path; lists compare whole', () => {
    expect(
      changedKeys(
        { log: { level: 'info' }, http: { tls: { cert: 'a' }, hosts: ['x'] }, same: 1 },
        { log: { level: 'debug' }, http: { tls: { cert: 'a' }, hosts: ['x', 'y'] }, same: 1 },
      ),
    ).toEqual(['log.level', 'http.hosts']);
    expect(changedKeys({ a: { b: 1 } }, { a: { b: 1 } })).toEqual([]);
    expect(changedKeys({ a: null }, { a: { b: 1 } })).toEqual(['a']);
  });
});

describe('reloadConfig and read replica URLs', () => {
  const configOf = (replicas: string[]): Config =>
    configSchema.parse({
      database: { url: 'postgres://app:pw@db:5432/appdb', readReplicas: replicas },
    });
  const run = async (before: string[], after: string[]) => {
    const current = configOf(before);
    const rotated: Array<[string, number, string]> = [];
    const logger = pino({ level: 'silent' });
    const urls = new Map(resolveDatabases(current).map((d) => [d.name, d.url]));
    const replicaUrls = new Map(resolveDatabases(current).map((d) => [d.name, d.readReplicas]));
    const next = await reloadConfig({
      current,
      read: async () => configOf(after),
      logger,
      setPassword: () => true,
      setReplicaPassword: (name, index, password) => (rotated.push([name, index, password]), true),
      urls,
      replicaUrls,
    });
    return { applied: next !== current, rotated, replicaUrls };
  };

  it("takes a replica URL's new password live", async () => {
    const { applied, rotated, replicaUrls } = await run(
      ['postgres://reader:old@r1:5432/appdb'],
      ['postgres://reader:new@r1:5432/appdb'],
    );
    expect(applied).toBe(true);
    expect(rotated).toEqual([['appdb', 0, 'new']]);
    expect(replicaUrls.get('appdb')).toEqual(['postgres://reader:new@r1:5432/appdb']);
  });

  it('refuses any other change to the replicas', async () => {
    for (const after of [
      ['postgres://reader:old@r2:5432/appdb'],
      ['postgres://other:old@r1:5432/appdb'],
      ['postgres://reader:old@r1:5432/appdb', 'postgres://reader:old@r2:5432/appdb'],
      [],
    ]) {
      const { applied, rotated } = await run(['postgres://reader:old@r1:5432/appdb'], after);
      expect(applied, after.join()).toBe(false);
      expect(rotated).toEqual([]);
    }
  });
});
