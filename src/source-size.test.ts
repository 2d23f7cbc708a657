// No source file in src/ grows past 400 lines: a file that long holds more than one job, and is
// split along its seams instead (tests beside the code are not counted).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 400;
const src = fileURLToPath(new URL('.', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.test\.[cm]?[jt]sx?$/.test(entry.name) ? [] : [path];
  });
}

/** Lines as `wc -l` counts them: a last line without its newline still counts. */
function lineCount(path: string): number {
  const text = readFileSync(path, 'utf8');
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('source file size', () => {
  it(`keeps every non-test file in src/ at ${MAX_LINES} lines or fewer`, () => {
    const files = sourceFiles(src);
    expect(files.length).toBeGreaterThan(100);
    const over = files
      .map((path) => ({ file: relative(src, path), lines: lineCount(path) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(over).toEqual([]);
  });
});
