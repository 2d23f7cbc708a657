// Keeps docs/configuration.md and examples/pgmcp.yaml in step with the schema.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from './env.js';
import { loadConfig } from './load.js';

describe('documentation stays in step', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));

  it('examples/pgmcp.yaml loads and mentions every key', () => {
    const path = join(root, 'examples/pgmcp.yaml');
    const config = loadConfig({ flags: { config: path }, env: {}, cwd: root });
    expect(config.http.allowedHosts).toEqual(['mcp.example.com']);
    const text = readFileSync(path, 'utf8');
    for (const [section, value] of Object.entries(config)) {
      const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
      expect(text).toMatch(new RegExp(`^${section}:`, 'm'));
      for (const key of keys) expect(text).toMatch(new RegExp(`^  ${key}:`, 'm'));
    }
  });

  it('docs/configuration.md names every key and environment variable', () => {
    const text = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
    for (const { key, env } of ENV_VARIABLES) {
      expect(text).toContain(`\`${key}\``);
      expect(text).toContain(`\`${env}\``);
    }
    expect(text).toContain('`database.url`');
  });
});
