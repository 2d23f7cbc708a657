// The stage table of `npm run bench` (bench/stages.mjs): every source file of src/ is named by
// a rule (a new file must be given its stage, or its samples would read as unattributed), and
// a profile's samples go to the stage of the innermost frame that names one. No timing here:
// the profiles below are built by hand in the shape `node --cpu-prof` writes.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

interface Attributed {
  stages: Record<string, number>;
  busySamples: number;
  idleSamples: number;
  unknownFiles: Record<string, number>;
}
interface StagesModule {
  STAGE_KEYS: Set<string>;
  SOURCE_STAGES: Record<string, string>;
  FUNCTION_STAGES: Record<string, Record<string, string>>;
  stageOfSource(file: string, functionName?: string): string | null;
  attributeProfile(profile: unknown, window?: { from?: number; to?: number }): Attributed;
  stageRows(
    attributed: Attributed,
    cpu: { mainThread: number; otherThreads: number; children: number },
  ): { rows: { key: string; usPerCall: number | null }[]; totalUsPerCall: number | null };
}

const src = fileURLToPath(new URL('../../src/', import.meta.url));
let stages: StagesModule;

beforeAll(async () => {
  const file = new URL('../../bench/stages.mjs', import.meta.url).href;
  stages = (await import(file)) as StagesModule;
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !/\.test\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe('the stage map', () => {
  it('names a stage for every source file in src/', () => {
    const files = sourceFiles(src).map((path) => relative(src, path).split('\\').join('/'));
    expect(files.length).toBeGreaterThan(100);
    const unnamed = files.filter((file) => stages.stageOfSource(file) === null);
    expect(unnamed).toEqual([]);
    for (const file of files) expect(stages.STAGE_KEYS.has(stages.stageOfSource(file)!)).toBe(true);
  });

  it('names only files and functions that exist', () => {
    const files = new Set(sourceFiles(src).map((path) => relative(src, path)));
    const stale = Object.keys(stages.SOURCE_STAGES).filter(
      (key) => !key.endsWith('/') && !files.has(key),
    );
    expect(stale).toEqual([]);
    for (const [file, functions] of Object.entries(stages.FUNCTION_STAGES)) {
      const text = readFileSync(join(src, file), 'utf8');
      for (const name of Object.keys(functions)) expect(text).toMatch(new RegExp(`\\b${name}\\(`));
    }
  });

  it('lets a file override its folder, and a function its file', () => {
    expect(stages.stageOfSource('cli/serve.ts')).toBe('elsewhere');
    expect(stages.stageOfSource('cli/audit-tool-calls.ts')).toBe('audit');
    expect(stages.stageOfSource('tools/routines/call.ts', 'callRoutine')).toBe('invoke');
    expect(stages.stageOfSource('tools/routines/call.ts', 'fetchRows')).toBe('db');
    // Names inherited from Object.prototype are not rules.
    expect(stages.stageOfSource('tools/invoke.ts', 'constructor')).toBe('invoke');
  });
});

/** A profile: stacks given root-first as [functionName, url], one sample per entry. */
function profileOf(samples: { stack: [string, string][]; at: number }[]) {
  const nodes: { id: number; callFrame: Record<string, unknown>; children: number[] }[] = [];
  const frame = (functionName: string, url: string) => ({
    functionName,
    url,
    scriptId: '0',
    lineNumber: 0,
    columnNumber: 0,
  });
  nodes.push({ id: 1, callFrame: frame('(root)', ''), children: [] });
  const ids: number[] = [];
  for (const { stack } of samples) {
    let parent = nodes[0]!;
    for (const [name, url] of stack) {
      let child = parent.children
        .map((id) => nodes[id - 1]!)
        .find((n) => n.callFrame.functionName === name && n.callFrame.url === url);
      if (!child) {
        child = { id: nodes.length + 1, callFrame: frame(name, url), children: [] };
        nodes.push(child);
        parent.children.push(child.id);
      }
      parent = child;
    }
    ids.push(parent.id);
  }
  const times = samples.map((s) => s.at);
  return {
    nodes,
    startTime: 1000,
    endTime: 1000 + times[times.length - 1]!,
    samples: ids,
    timeDeltas: times.map((t, i) => t - (i === 0 ? 0 : times[i - 1]!)),
  };
}

const dist = (file: string) => `file:///work/pgmcp/dist/${file}`;
const pkg = (file: string) => `file:///work/pgmcp/node_modules/${file}`;

describe('attributing samples', () => {
  const profile = profileOf([
    // pg's socket write under the statement's pipeline: the database round trip
    {
      at: 10,
      stack: [
        ['runStatement', dist('db/database.js')],
        ['query', pkg('pg/lib/client.js')],
        ['writev', ''],
      ],
    },
    // the same write under the audit: pg is soft, the audit above it names the stage
    {
      at: 20,
      stack: [
        ['flush', dist('state/audit.js')],
        ['query', pkg('pg/lib/client.js')],
        ['writev', ''],
      ],
    },
    // ajv is firm: argument validation even though invoke.js called it
    {
      at: 30,
      stack: [
        ['invoke', dist('tools/invoke.js')],
        ['validate', pkg('ajv/dist/core.js')],
      ],
    },
    // fastify with no pgmcp frame above: HTTP
    {
      at: 40,
      stack: [
        ['parserOnIncoming', 'node:_http_server'],
        ['hookRunner', pkg('fastify/lib/hooks.js')],
      ],
    },
    // Node's streams alone: the event loop
    {
      at: 50,
      stack: [
        ['onStreamRead', 'node:internal/stream_base_commons'],
        ['Readable.push', 'node:internal/streams/readable'],
      ],
    },
    // a file no rule names stops the walk: unattributed, listed
    {
      at: 60,
      stack: [
        ['invoke', dist('tools/invoke.js')],
        ['fresh', dist('tools/query/not-yet-mapped.js')],
      ],
    },
    { at: 70, stack: [['(garbage collector)', '']] },
    { at: 80, stack: [['(program)', '']] },
    { at: 90, stack: [['(idle)', '']] },
    // outside the window below
    { at: 500, stack: [['sendJson', dist('http/replies.js')]] },
  ]);

  it('gives each sample the innermost stage on its stack', () => {
    const a = stages.attributeProfile(profile, { from: 1000, to: 1100 });
    expect(a.busySamples).toBe(8);
    expect(a.idleSamples).toBe(1);
    const nonZero = Object.fromEntries(Object.entries(a.stages).filter(([, n]) => n > 0));
    expect(nonZero).toEqual({
      db: 1,
      audit: 1,
      validation: 1,
      http: 1,
      eventloop: 1,
      unattributed: 1,
      gc: 1,
      program: 1,
    });
    expect(a.unknownFiles).toEqual({ 'dist/tools/query/not-yet-mapped.js': 1 });
  });

  it('splits the main thread by the shares and adds the other rows, so the table adds up', () => {
    const a = stages.attributeProfile(profile, { from: 1000, to: 1100 });
    const table = stages.stageRows(a, { mainThread: 400, otherThreads: 30, children: 70 });
    const byKey = Object.fromEntries(table.rows.map((r) => [r.key, r.usPerCall]));
    expect(byKey.db).toBe(50);
    expect(byKey.threads).toBe(30);
    expect(byKey.children).toBe(70);
    expect(table.totalUsPerCall).toBe(500);
    const sum = table.rows.reduce((n, r) => n + (r.usPerCall ?? 0), 0);
    expect(sum).toBeCloseTo(500, 9);
  });
});
