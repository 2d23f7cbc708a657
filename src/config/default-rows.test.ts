// database.defaultRows, when left unset, follows maxRows down (min(100, maxRows)); set together
// with a smaller maxRows it is refused, naming both values and where each was set.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../core/errors.js';
import { resolveDatabases } from './databases.js';
import { loadConfig } from './load.js';
import type { Config } from './schema.js';

const dir = mkdtempSync(join(tmpdir(), 'pgmcp-default-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function file(text: string): string {
  const path = join(dir, `config-${++counter}.yaml`);
  writeFileSync(path, text);
  return path;
}

function load(yaml: string | null, env: NodeJS.ProcessEnv = {}): Config {
  const flags = yaml === null ? {} : { config: file(yaml) };
  return loadConfig({ flags, env, cwd: dir });
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

describe('database.defaultRows left unset', () => {
  it('is 100 with the default maxRows, and with a maxRows above 100', () => {
    expect(load(null).database).toMatchObject({ maxRows: 1000, defaultRows: 100 });
    expect(load('database:\n  maxRows: 5000\n').database.defaultRows).toBe(100);
  });

  it('is maxRows when a file sets only a maxRows below 100', () => {
    expect(load('database:\n  maxRows: 50\n').database).toMatchObject({
      maxRows: 50,
      defaultRows: 50,
    });
  });

  it('is maxRows when only PGMCP_MAX_ROWS is set below 100', () => {
    expect(load(null, { PGMCP_MAX_ROWS: '20' }).database).toMatchObject({
      maxRows: 20,
      defaultRows: 20,
    });
  });

  it('is maxRows for each of several databases that sets only its own maxRows', () => {
    const config = load(
      [
        'database:',
        '  maxRows: 60',
        'databases:',
        '  - name: a',
        '    url: postgres://u@h/a',
        '    maxRows: 10',
        '  - name: b',
        '    url: postgres://u@h/b',
      ].join('\n'),
    );
    const [a, b] = resolveDatabases(config, { env: {} });
    expect(a).toMatchObject({ name: 'a', maxRows: 10, defaultRows: 10 });
    expect(b).toMatchObject({ name: 'b', maxRows: 60, defaultRows: 60 });
  });
});

describe('database.defaultRows set explicitly', () => {
  it('is kept when it is at most maxRows', () => {
    expect(load('database:\n  maxRows: 50\n  defaultRows: 10\n').database.defaultRows).toBe(10);
    expect(load(null, { PGMCP_DEFAULT_ROWS: '7' }).database.defaultRows).toBe(7);
  });

  it('above maxRows is refused, naming both values and their sources', () => {
    const path = file('database:\n  maxRows: 50\n');
    const error = failure(() =>
      loadConfig({ flags: { config: path }, env: { PGMCP_DEFAULT_ROWS: '80' }, cwd: dir }),
    );
    expect(error.message).toBe(
      `database.defaultRows: must not exceed database.maxRows (50, from ${path}), got 80 (from PGMCP_DEFAULT_ROWS)`,
    );
  });

  it('above the default maxRows says that maxRows is the default', () => {
    const error = failure(() => load(null, { PGMCP_DEFAULT_ROWS: '2000' }));
    expect(error.message).toBe(
      'database.defaultRows: must not exceed database.maxRows (1000, the default), got 2000 (from PGMCP_DEFAULT_ROWS)',
    );
  });

  it('inherited by a database whose own maxRows is smaller is refused, naming both', () => {
    const config = load(
      [
        'database:',
        '  defaultRows: 30',
        'databases:',
        '  - name: a',
        '    url: postgres://u@h/a',
        '    maxRows: 10',
      ].join('\n'),
    );
    const error = failure(() => resolveDatabases(config, { env: {} }));
    expect(error.message).toBe(
      'databases[0].defaultRows: database.defaultRows (30) must not exceed databases[0].maxRows (10)',
    );
  });
});
