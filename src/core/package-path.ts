// Where pgmcp's own files are (package.json, sql/, web/dist/), for the code that reads them.
// This module is two directories below the package root in all three forms pgmcp runs in:
// src/core/ (vitest), dist/core/ (tsc) and dist/bundle/ (the bundle bin/pgmcp loads, built by
// scripts/bundle.mjs), so the root is `../..` from here in each. Keep it at that depth.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The absolute path of `relative` (slash-separated) inside the installed package. */
export function packagePath(relative: string): string {
  return resolve(ROOT, ...relative.split('/'));
}
