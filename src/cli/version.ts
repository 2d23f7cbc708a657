import { readFileSync } from 'node:fs';
import { packagePath } from '../core/package-path.js';

/** pgmcp's own version, from its package.json. */
export const VERSION: string = (() => {
  try {
    const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
