// Preloaded into a pgmcp server by bench/embedded-policy.mjs (`node --import`): counts the
// statements the server sends to its database, as pg's protocol encoder sees them — every
// extended-protocol Parse (the one-trip pipeline and pg's own queries) and every simple Query —
// and answers the counts over the IPC channel the bench opened. Nothing of pgmcp is changed.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.cwd(), 'package.json'));
const { serialize } = createRequire(require.resolve('pg'))('pg-protocol');

/** Statement text (its first 60 characters, spaces collapsed) → how often it was sent. */
let counts = new Map();
const note = (text) => {
  const key = String(text).replace(/\s+/g, ' ').trim().slice(0, 60);
  counts.set(key, (counts.get(key) ?? 0) + 1);
};
for (const name of ['parse', 'query']) {
  const original = serialize[name];
  serialize[name] = function counted(arg) {
    note(typeof arg === 'string' ? arg : arg?.text);
    return original.apply(this, arguments);
  };
}

if (process.send) {
  process.on('message', (message) => {
    if (message?.type !== 'statement-counts') return;
    process.send({ type: 'statement-counts', counts: [...counts] });
    counts = new Map();
  });
  // The channel must not keep the server alive on its own.
  process.channel?.unref();
}
