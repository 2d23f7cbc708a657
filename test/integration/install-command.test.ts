// pgmcp install (the CLI's install()) against a throwaway database: what it leaves behind
// when it cannot finish.
import { describe, expect, it, vi } from 'vitest';
import { install } from '../../src/cli/install.js';
import { configSchema } from '../../src/config/schema.js';
import { isAppError } from '../../src/core/errors.js';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';

const pgInfo = await realPostgres('test/integration/install-command.test.ts');
// Defined only where a PostgreSQL server exists; realPostgres records the suite as skipped otherwise.
if (pgInfo) {
  describe('pgmcp install --grant-runtime', () => {
    const target = throwawayDatabase(pgInfo, 'pgmcp_install');

    it('refuses a role that does not exist before changing anything', async () => {
      const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      const config = configSchema.parse({ database: { url: target.url } });
      const error = await install(config, { grantRuntime: 'pgmcp_no_such_role' })
        .catch((e: unknown) => e)
        .finally(() => stdout.mockRestore());
      expect(isAppError(error) && error.category).toBe('input');
      expect((error as Error).message).toContain('pgmcp_no_such_role');
      const left = await withClient(target.url, (c) =>
        c.query("SELECT to_regnamespace('mcp') IS NOT NULL AS mcp"),
      );
      expect(left.rows[0]).toEqual({ mcp: false });
    });
  });
}
