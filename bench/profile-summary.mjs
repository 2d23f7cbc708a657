// Summarizes a V8 .cpuprofile (node --cpu-prof): self time by package/file, the hottest
// functions by self time, and pgmcp's own functions by inclusive time.
// Used by run.mjs under BENCH_PROFILE=1; also runnable: node bench/profile-summary.mjs FILE
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SPECIAL = new Set(['(garbage collector)', '(idle)', '(program)', '(root)']);

/** Which package or area a frame belongs to. */
function categoryOf(frame) {
  const { url, functionName } = frame;
  if (SPECIAL.has(functionName)) return functionName;
  if (!url) return '(native/builtin)';
  if (url.startsWith('node:')) return url;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  const dist = url.lastIndexOf('/dist/');
  if (dist !== -1) return `pgmcp ${url.slice(dist + 1)}`;
  return url.replace(/^file:\/\//, '');
}

const nameOf = (frame) =>
  `${frame.functionName || '(anonymous)'} ${categoryOf(frame)}:${frame.lineNumber + 1}`;

/**
 * skipMs: ignore the first milliseconds of the profile (start-up, smoke tests);
 * requests: requests served after that point, to show µs per request.
 */
export function summarizeProfile(file, { top = 25, skipMs = 0, requests = 0 } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);

  const self = new Map();
  const inclusive = new Map();
  const categories = new Map();
  let busy = 0;
  let total = 0;
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);

  let clock = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    clock += us;
    const node = byId.get(id);
    if (!node || clock < skipMs * 1000) return;
    total += us;
    if (node.callFrame.functionName === '(idle)') return;
    busy += us;
    add(self, nameOf(node.callFrame), us);
    add(categories, categoryOf(node.callFrame), us);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at).callFrame;
      if (!frame.url.includes('/dist/') && !frame.url.includes('/bench/')) continue;
      const key = nameOf(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusive, key, us);
    }
  });

  const ranked = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({
        name,
        ms: us / 1000,
        pctOfBusy: (100 * us) / (busy || 1),
        usPerRequest: requests ? us / requests : null,
      }));
  const byCategory = ranked(categories, 20);
  const bySelf = ranked(self, top);
  const byInclusive = ranked(inclusive, top);

  const perReq = (r) =>
    r.usPerRequest === null ? '' : `${r.usPerRequest.toFixed(2).padStart(7)} µs/req  `;
  const table = (title, rows) => [
    title,
    ...rows.map(
      (r) =>
        `  ${r.pctOfBusy.toFixed(1).padStart(5)} %  ${r.ms.toFixed(0).padStart(7)} ms  ${perReq(r)}${r.name}`,
    ),
  ];
  const busyUsPerRequest = requests ? busy / requests : null;
  const text = [
    `profiled ${(total / 1e6).toFixed(1)} s (first ${(skipMs / 1000).toFixed(1)} s skipped: start-up and smoke test), busy ${(busy / 1e6).toFixed(2)} s` +
      (requests
        ? ` for ${requests} requests = ${busyUsPerRequest.toFixed(1)} µs busy per request`
        : ''),
    ...table('self time by package / file:', byCategory),
    ...table(`top ${top} functions by self time:`, bySelf),
    ...table(`own functions (dist/, bench/) by inclusive time (top ${top}):`, byInclusive),
  ].join('\n');
  return {
    busyMs: busy / 1000,
    totalMs: total / 1000,
    requests,
    busyUsPerRequest,
    byCategory,
    bySelf,
    byInclusive,
    text,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/profile-summary.mjs FILE.cpuprofile');
    process.exit(2);
  }
  console.log(summarizeProfile(file).text);
}
