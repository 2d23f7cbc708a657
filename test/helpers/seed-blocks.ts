// The SQL and curl examples of the compatibility documents (pgmi's MCP guide and skill notes,
// the pgEdge agent's protocol and API pages, NpgsqlRest's McpOptions page), extracted as a
// reader would copy them. The documents are not part of this repository: PGMCP_SEEDS_DIR names
// the folder that holds them (CI sets it); without it the suite that reads them is skipped. Seeds that keep their code fences (```sql) are read by fence; the others
// are web pages saved as text, where an example is a run of lines that starts like SQL (or
// with `curl`) and ends where prose resumes.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { reportSkipped } from './postgres.js';

/** The folder holding the documents, named `NNN_*.txt|md` by number; null when not given. */
export const SEEDS_DIR = process.env['PGMCP_SEEDS_DIR'] || null;

/**
 * Whether the documents are here for `suite`; when not, the suite is reported as skipped (one
 * line, and a line in .tmp/skipped-suites.txt, which fails CI where they should be present).
 */
export function seedsPresent(suite: string): boolean {
  if (SEEDS_DIR && existsSync(SEEDS_DIR)) return true;
  reportSkipped(
    suite,
    SEEDS_DIR
      ? `PGMCP_SEEDS_DIR names ${SEEDS_DIR}, which does not exist`
      : 'the compatibility documents are not in this repository; set PGMCP_SEEDS_DIR to the folder that holds them',
  );
  return false;
}

export interface SeedBlock {
  /** `000`, `003`, … */
  seed: string;
  kind: 'sql' | 'curl';
  /** 1-based line of the block's first line in the seed file. */
  line: number;
  text: string;
  /** The first non-empty line, trimmed: how the test names and classifies the block. */
  head: string;
}

export function seedFile(seed: string): string {
  if (!SEEDS_DIR) throw new Error('PGMCP_SEEDS_DIR is not set');
  const file = readdirSync(SEEDS_DIR).find((f) => f.startsWith(`${seed}_`));
  if (!file) throw new Error(`document ${seed} not found in ${SEEDS_DIR}`);
  return join(SEEDS_DIR, file);
}

const SQL_START = /^(--|SELECT\b|DO\b|CREATE\b|SET\b|DECLARE\b|BEGIN;|GRANT\b)/;
/** After a blank line inside an example: indented code, a comment or another statement. */
const SQL_GOES_ON =
  /^(\s|--|SELECT\b|DO\b|CREATE\b|SET\b|DECLARE\b|BEGIN\b|END\b|COMMIT\b|\$body\$|\))/;

function block(seed: string, kind: SeedBlock['kind'], line: number, lines: string[]): SeedBlock {
  const text = lines.join('\n').replace(/\s+$/, '');
  const head = (lines.find((l) => l.trim() !== '') ?? '').trim();
  return { seed, kind, line, text, head };
}

/** Fenced seeds: every ```sql block, and every fenced block holding a curl command. */
function fenced(seed: string, lines: string[]): SeedBlock[] {
  const out: SeedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    const body = lines.slice(start, end);
    if (open[1] === 'sql') out.push(block(seed, 'sql', start + 1, body));
    else if (body.some((l) => /^\s*curl\s/.test(l))) out.push(block(seed, 'curl', start + 1, body));
    i = end;
  }
  return out;
}

/** A curl command: continued by a trailing backslash or an open single-quoted argument. */
function curlAt(lines: string[], i: number): number {
  let end = i;
  let quoted = false;
  for (; end < lines.length; end++) {
    const l = lines[end]!;
    for (const ch of l) if (ch === "'") quoted = !quoted;
    if (!quoted && !/\\\s*$/.test(l)) break;
  }
  return end;
}

function unfenced(seed: string, lines: string[]): SeedBlock[] {
  const out: SeedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^curl\s/.test(l)) {
      const end = curlAt(lines, i);
      out.push(block(seed, 'curl', i + 1, lines.slice(i, end + 1)));
      i = end;
      continue;
    }
    if (!SQL_START.test(l)) continue;
    let end = i;
    for (;;) {
      let next = end + 1;
      while (next < lines.length && lines[next]!.trim() === '') next++;
      if (next >= lines.length) break;
      if (next === end + 1 || SQL_GOES_ON.test(lines[next]!)) end = next;
      else break;
    }
    out.push(block(seed, 'sql', i + 1, lines.slice(i, end + 1)));
    i = end;
  }
  return out;
}

export function seedBlocks(seed: string): SeedBlock[] {
  const lines = readFileSync(seedFile(seed), 'utf8').split('\n');
  return lines.some((l) => /^```sql\s*$/.test(l)) ? fenced(seed, lines) : unfenced(seed, lines);
}
