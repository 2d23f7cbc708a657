import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { answerOf, HTTP_REFUSALS, isPlaced, MCP_HTTP_STATUS, RpcCodes } from './error-table.js';
import { ErrorCodes, type ErrorCategory } from './errors.js';

const CATEGORIES: readonly ErrorCategory[] = [
  'input',
  'not_found',
  'auth',
  'forbidden',
  'timeout',
  'unavailable',
  'conflict',
  'database',
  'config',
  'internal',
];
const RPC_CODES = new Set<number>(Object.values(RpcCodes));

describe('error codes', () => {
  const catalogue = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

  it('are unique', () => {
    const codes = Object.values(ErrorCodes);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it.each(Object.entries(ErrorCodes))('%s (%s) is catalogued in docs/errors.md', (name, code) => {
    expect(catalogue).toMatch(new RegExp(`\\|\\s*${code}\\s*\\|\\s*${name}\\s*\\|`));
  });

  it.each(Object.keys(ErrorCodes))('%s is raised somewhere in src/', (name) => {
    const root = fileURLToPath(new URL('../', import.meta.url));
    const sources = (readdirSync(root, { recursive: true }) as string[])
      .filter(
        (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== join('core', 'errors.ts'),
      )
      .map((f) => readFileSync(join(root, f), 'utf8'));
    expect(sources.some((text) => text.includes(`ErrorCodes.${name}`))).toBe(true);
  });

  it.each(Object.entries(ErrorCodes))(
    '%s (%s) maps through the error table in every category',
    (_name, code) => {
      expect(isPlaced(code)).toBe(true);
      for (const category of CATEGORIES) {
        const row = answerOf({ code, category });
        expect(RPC_CODES.has(row.rpc), `${category}: JSON-RPC code ${row.rpc}`).toBe(true);
        expect(row.status, `${category}: REST status`).toBeGreaterThanOrEqual(400);
        expect(row.status, `${category}: REST status`).toBeLessThan(600);
        // The answer to a bug never carries its message.
        if (row.mcp === 'reference') expect(row.rest).toBe('reference');
        if (row.oauth) expect([400, 401]).toContain(row.oauth.status);
        expect([1, 2]).toContain(row.exit);
      }
    },
  );

  it('places no code the catalogue lacks', () => {
    expect(isPlaced('PGMCP999')).toBe(false);
  });

  it('gives every JSON-RPC code and every HTTP refusal an HTTP status', () => {
    for (const code of RPC_CODES) {
      const row = MCP_HTTP_STATUS[code as keyof typeof MCP_HTTP_STATUS];
      expect(row, `JSON-RPC code ${code}`).toBeDefined();
    }
    for (const [name, refusal] of Object.entries(HTTP_REFUSALS)) {
      expect(RPC_CODES.has(refusal.rpc), name).toBe(true);
      expect(refusal.status, name).toBeGreaterThanOrEqual(400);
    }
  });
});
