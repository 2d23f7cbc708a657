import { describe, expect, it } from 'vitest';
import { DEMO_MARKER, loadDemoSql } from './demo.js';

// Static checks of sql/demo; test/integration/embedded.test.ts loads it for real.
describe('demo dataset SQL', () => {
  it('is found next to the package and carries the completion marker', async () => {
    const sql = await loadDemoSql();
    expect(sql).toMatch(new RegExp(`COMMENT ON SCHEMA demo IS '${DEMO_MARKER}`));
  });

  it('leaves transaction control to the loader, so a failed seed leaves nothing behind', async () => {
    const code = stripComments(await loadDemoSql());
    expect(code).not.toMatch(/^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION|END)\s*;/im);
  });

  it('is deterministic: no random() and no clock-dependent values', async () => {
    const code = stripComments(await loadDemoSql());
    expect(code).not.toMatch(/\brandom\s*\(/i);
    expect(code).not.toMatch(
      /\b(now|clock_timestamp|gen_random_uuid)\s*\(|\bcurrent_(date|timestamp)\b/i,
    );
  });
});

function stripComments(sql: string): string {
  return sql.replace(/--.*$/gm, '');
}
