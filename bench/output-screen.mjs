// What the output screen (src/tools/output-screen.ts) costs an answer with nothing to withhold:
// 1,000 rows of seven columns (six strings, one small jsonb), screened cell by cell as an @mcp
// routine's result is, and as a registry handler's whole result (structuredContent plus the
// same rows as JSON text). For scale: the bare test (looksLikeCredential) on the same strings.
// Run after `npm run build`: node bench/output-screen.mjs
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
const { screenValue, screenToolResult } = await load('tools/output-screen.js');
const { looksLikeCredential } = await load('core/credential-shape.js');

const ROWS = 1000;
const ROUNDS = 7;
const CALLS = 300;
const rows = Array.from({ length: ROWS }, (_, i) => [
  i,
  `user ${i}`,
  `u${i}@example.org`,
  'ordinary note about an order placed yesterday',
  'Lisbon',
  'a password reset was requested', // a near miss: passes the cheap test, not the patterns
  { status: 'shipped', tags: ['gift', 'express'] },
]);
const names = ['id', 'name', 'email', 'note', 'city', 'history', 'meta'];
const objects = rows.map((row) => Object.fromEntries(names.map((n, i) => [n, row[i]])));
const handlerResult = {
  content: [{ type: 'text', text: JSON.stringify({ items: objects }) }],
  structuredContent: { items: objects },
};
const strings = rows.flatMap((r) => [r[1], r[2], r[3], r[4], r[5], r[6].status, ...r[6].tags]);

function median(work) {
  const times = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let k = 0; k < CALLS; k++) work();
    times.push(Number(process.hrtime.bigint() - start) / CALLS / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(ROUNDS / 2)];
}

let sink = 0;
const cells = () => {
  const tally = { count: 0 };
  for (const row of rows) for (const v of row) if (screenValue(v, tally) !== v) sink++;
};
const whole = () => {
  if (screenToolResult(handlerResult) !== handlerResult) sink++;
};
const bare = () => {
  for (const s of strings) if (looksLikeCredential(s)) sink++;
};
// Warm up.
for (let i = 0; i < 50; i++) {
  cells();
  whole();
  bare();
}

const text = handlerResult.content[0].text.length;
console.log(
  `${ROWS} rows, ${strings.length} strings, nothing withheld (median of ${ROUNDS} rounds of ${CALLS} calls):`,
);
console.log(`  routine cells (screenValue per cell)       ${median(cells).toFixed(0)} µs`);
console.log(
  `  handler result (structured + ${text}-char JSON text) ${median(whole).toFixed(0)} µs`,
);
console.log(`  looksLikeCredential alone on the strings  ${median(bare).toFixed(0)} µs`);
if (sink !== 0) throw new Error('something was withheld');
