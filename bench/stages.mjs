// Where a tools/call's CPU goes, by stage: the map from pgmcp's source files (and the packages
// and Node modules they call) to the stages of a call, and the attribution of a V8 CPU profile's
// samples to those stages. run.mjs profiles a pgmcp process under the `call` and `routine`
// loads (unbundled dist/, so every frame names its source file) and prints the table;
// test/bench/stage-map.test.ts checks that every file in src/ is named here.
//
// A sample belongs to the stage of the innermost frame on its stack that names one:
//   - pgmcp's own files (SOURCE_STAGES, FUNCTION_STAGES) name their stage at once;
//   - "firm" packages (ajv, the SQL parser, pino, ...) too, whoever called them;
//   - "soft" packages and Node modules (fastify, pg, node:_http_*) name a stage only when no
//     pgmcp frame sits above them (pg's write under the audit belongs to the audit);
//   - everything else (Node's streams, sockets, timers, async hooks, native frames) passes the
//     sample up to its caller; a stack with nothing but those is the event loop's own work;
//   - a file or package no rule names stops the walk: its samples are `unattributed`, listed by
//     file, so the table always adds up and a new file shows instead of hiding in its caller.
import path from 'node:path';

/** The rows of the table, in the order of a call. */
export const STAGES = [
  { key: 'http', label: 'HTTP and Fastify (request, hooks, route, reply)' },
  { key: 'jsonrpc', label: 'JSON-RPC (body parse, classify, dispatch)' },
  { key: 'session', label: 'session and auth (caller, MCP session, gate)' },
  { key: 'invoke', label: 'tool call plumbing (tools/call, invoke, context)' },
  { key: 'validation', label: 'argument and output validation' },
  { key: 'parse', label: 'SQL parse or verdict cache' },
  { key: 'policy', label: 'access policy' },
  { key: 'plan', label: 'plan (cost limits, confirm, the call to run)' },
  { key: 'db', label: 'database round trip (pool, pipeline, pg, socket)' },
  { key: 'format', label: 'formatting text and structured content' },
  { key: 'audit', label: 'audit and exchange log' },
  { key: 'serialize', label: 'serialization (the answer as JSON)' },
  { key: 'observe', label: 'logging, tracing, metrics, request scope' },
  { key: 'elsewhere', label: 'other pgmcp code (no call stage: watch, start-up)' },
  { key: 'eventloop', label: 'Node event loop, sockets, timers (no owner)' },
  { key: 'gc', label: 'garbage collection (main thread)' },
  { key: 'program', label: 'V8 and native code outside JavaScript' },
  { key: 'unattributed', label: 'unattributed (frames no rule names)' },
];
/** Rows from /proc, not from the profile. */
export const PROCESS_ROWS = [
  { key: 'threads', label: "pgmcp's other threads (GC helpers, compiler, libuv)" },
  { key: 'children', label: 'child processes (embedded state database)' },
];
export const STAGE_KEYS = new Set(STAGES.map((s) => s.key));

/**
 * pgmcp's source files (paths under src/, `.ts`) → stage. A path ending in `/` covers a whole
 * folder; the longest match wins, so a file named here overrides its folder.
 */
export const SOURCE_STAGES = {
  // folders no call passes through (REST, chat, configuration, start-up, other tools)
  'api/': 'elsewhere',
  'cli/': 'elsewhere',
  'config/': 'elsewhere',
  'embeddings/': 'elsewhere',
  'llm/': 'elsewhere',
  'testing/': 'elsewhere',
  'catalog/': 'elsewhere',
  'tools/builtin/': 'elsewhere',
  'tools/common/': 'elsewhere',
  'tools/dba/': 'elsewhere',
  'tools/explain/': 'elsewhere',
  'tools/prompts/': 'elsewhere',
  'tools/resources/': 'elsewhere',
  'tools/search/': 'elsewhere',
  'auth/': 'session',
  'db/': 'db',
  'state/': 'session',
  'http/oauth-server/': 'session',
  // cli: what runs per call
  'cli/audit-tool-calls.ts': 'audit',
  'cli/logger.ts': 'observe',
  'cli/metrics.ts': 'observe',
  'cli/metrics-feeds.ts': 'observe',
  'cli/metrics-serve.ts': 'observe',
  'cli/telemetry.ts': 'observe',
  // core
  'core/chat-message.ts': 'elsewhere',
  'core/content.ts': 'format',
  'core/credential-shape.ts': 'format',
  'core/error-table.ts': 'jsonrpc',
  'core/errors.ts': 'invoke',
  'core/glob.ts': 'policy',
  'core/header-value.ts': 'http',
  'core/index.ts': 'invoke',
  'core/json-schema.ts': 'validation',
  'core/metrics.ts': 'observe',
  'core/package-path.ts': 'elsewhere',
  'core/principal.ts': 'session',
  'core/refusals.ts': 'http',
  'core/request-scope.ts': 'observe',
  'core/signed.ts': 'session',
  'core/specs.ts': 'invoke',
  'core/sql.ts': 'db',
  'core/tasks.ts': 'elsewhere',
  'core/tracing.ts': 'observe',
  'core/used-nonces.ts': 'plan',
  // http
  'http/authenticate.ts': 'session',
  'http/challenge.ts': 'session',
  'http/cors.ts': 'http',
  'http/drain.ts': 'http',
  'http/edge.ts': 'http',
  'http/header-guard.ts': 'http',
  'http/listen-probe.ts': 'http',
  'http/mcp-route.ts': 'http',
  'http/mcp/accept.ts': 'http',
  'http/mcp/answer.ts': 'http',
  'http/mcp/channel.ts': 'jsonrpc',
  'http/mcp/endpoint.ts': 'http',
  'http/mcp/exchange.ts': 'jsonrpc',
  'http/mcp/get-stream.ts': 'http',
  'http/mcp/keep-session.ts': 'session',
  'http/mcp/named-session.ts': 'session',
  'http/mcp/parse.ts': 'jsonrpc',
  'http/mcp/place.ts': 'session',
  'http/mcp/response-stream.ts': 'http',
  'http/mcp/stateless.ts': 'session',
  'http/mcp/timings.ts': 'observe',
  'http/mcp/watch.ts': 'session',
  'http/metrics-route.ts': 'observe',
  'http/oauth-discovery.ts': 'session',
  'http/oauth-setup.ts': 'session',
  'http/observe.ts': 'observe',
  'http/origin.ts': 'http',
  'http/principal.ts': 'session',
  'http/probes.ts': 'http',
  'http/rate-limit.ts': 'session',
  'http/refuse.ts': 'http',
  'http/replies.ts': 'http',
  'http/security-headers.ts': 'http',
  'http/server.ts': 'http',
  'http/session-sharing.ts': 'session',
  'http/sessions.ts': 'session',
  'http/sse.ts': 'http',
  'http/status.ts': 'http',
  'http/stream-watch.ts': 'session',
  'http/tls.ts': 'http',
  'http/trace.ts': 'observe',
  'http/trusted-peers.ts': 'http',
  'http/web-client.ts': 'elsewhere',
  // mcp
  'mcp/apps.ts': 'elsewhere',
  'mcp/call-context.ts': 'invoke',
  'mcp/channel.ts': 'jsonrpc',
  'mcp/dispatcher.ts': 'jsonrpc',
  'mcp/errors.ts': 'jsonrpc',
  'mcp/headers.ts': 'jsonrpc',
  'mcp/inbound.ts': 'jsonrpc',
  'mcp/input-required.ts': 'invoke',
  'mcp/jsonrpc.ts': 'jsonrpc',
  'mcp/methods/completion.ts': 'elsewhere',
  'mcp/methods/index.ts': 'jsonrpc',
  'mcp/methods/lifecycle.ts': 'session',
  'mcp/methods/prompts.ts': 'elsewhere',
  'mcp/methods/resources.ts': 'elsewhere',
  'mcp/methods/shared.ts': 'invoke',
  'mcp/methods/tools.ts': 'invoke',
  'mcp/outbound.ts': 'jsonrpc',
  'mcp/pagination.ts': 'elsewhere',
  'mcp/serialize.ts': 'serialize',
  'mcp/session.ts': 'session',
  'mcp/stdio.ts': 'elsewhere',
  'mcp/subscriptions.ts': 'elsewhere',
  // A tools/call asks here whether it wants a task; the rest serves tasks/* only.
  'mcp/tasks/call.ts': 'invoke',
  'mcp/tasks/methods.ts': 'elsewhere',
  'mcp/tasks/service.ts': 'elsewhere',
  'mcp/tasks/wire.ts': 'elsewhere',
  'mcp/trace.ts': 'observe',
  'mcp/versions.ts': 'jsonrpc',
  // state: what a call writes (the rest of the folder is sessions, tokens, users)
  'state/audit.ts': 'audit',
  'state/state-db.ts': 'audit',
  'state/conversation-input.ts': 'elsewhere',
  'state/conversation-store.ts': 'elsewhere',
  'state/migrations.ts': 'elsewhere',
  // tools
  'tools/access-policy.ts': 'policy',
  'tools/common/parse-tree.ts': 'parse',
  'tools/credentials.ts': 'format',
  'tools/database-catalog.ts': 'policy',
  'tools/database-routing.ts': 'invoke',
  'tools/databases.ts': 'invoke',
  'tools/gate.ts': 'session',
  'tools/handlers/convert.ts': 'format',
  'tools/handlers/exchange-log.ts': 'audit',
  'tools/handlers/handler-specs.ts': 'invoke',
  'tools/handlers/index.ts': 'invoke',
  'tools/handlers/install.ts': 'elsewhere',
  'tools/handlers/invocation.ts': 'invoke',
  'tools/handlers/loader.ts': 'elsewhere',
  'tools/handlers/metadata-screen.ts': 'elsewhere',
  'tools/handlers/pgmi.ts': 'elsewhere',
  'tools/handlers/types.ts': 'invoke',
  'tools/invoke.ts': 'invoke',
  'tools/live-catalog.ts': 'policy',
  'tools/output-screen.ts': 'format',
  'tools/query/catalog-access.ts': 'policy',
  'tools/query/catalog-facts.ts': 'policy',
  'tools/query/catalog-filters.ts': 'policy',
  'tools/query/catalog-functions.ts': 'policy',
  'tools/query/catalog-judge.ts': 'policy',
  'tools/query/catalog-moved.ts': 'policy',
  'tools/query/catalog-names.ts': 'policy',
  'tools/query/catalog-uses.ts': 'policy',
  'tools/query/credential-screen.ts': 'format',
  'tools/query/cte-scope.ts': 'policy',
  'tools/query/indirection.ts': 'policy',
  'tools/query/masked-use.ts': 'policy',
  'tools/query/policy-cache.ts': 'policy',
  'tools/query/policy-judge.ts': 'policy',
  'tools/query/query-confirm.ts': 'plan',
  'tools/query/query-database.ts': 'invoke',
  'tools/query/query-format.ts': 'format',
  'tools/query/query-plan.ts': 'plan',
  'tools/query/query-policy.ts': 'policy',
  'tools/query/relation-access.ts': 'policy',
  'tools/query/sent-text.ts': 'parse',
  'tools/query/type-names.ts': 'format',
  'tools/query/write-confirmation.ts': 'plan',
  'tools/query/written-name.ts': 'policy',
  'tools/registry.ts': 'invoke',
  'tools/routines/call.ts': 'invoke',
  'tools/routines/derive.ts': 'elsewhere',
  'tools/routines/index.ts': 'invoke',
  'tools/routines/result-values.ts': 'format',
  'tools/routines/type-schema.ts': 'elsewhere',
  'tools/sql-guard.ts': 'parse',
  'tools/denied-functions.ts': 'parse',
  'tools/tool-call-record.ts': 'audit',
  'tools/tsv.ts': 'format',
  'tools/uri-template.ts': 'elsewhere',
  'tools/validation.ts': 'validation',
};

/** Functions of a file whose stage differs from the file's (by the profile's function name). */
export const FUNCTION_STAGES = {
  'tools/invoke.ts': { outputIssues: 'validation' },
  'tools/routines/call.ts': {
    buildCall: 'plan',
    placeholder: 'plan',
    toParameter: 'plan',
    fetchRows: 'db',
    shapeResult: 'format',
    cell: 'format',
  },
  'tools/routines/result-values.ts': { columnExpr: 'plan', columnRead: 'plan' },
};

/** node_modules packages → [stage, firm]: firm binds whoever called; soft yields to pgmcp above. */
export const PACKAGE_STAGES = {
  // HTTP server
  fastify: ['http', false],
  '@fastify/': ['http', false],
  'find-my-way': ['http', false],
  avvio: ['http', false],
  'light-my-request': ['http', false],
  'fast-json-stringify': ['http', false],
  'secure-json-parse': ['http', false],
  'fast-querystring': ['http', false],
  'fast-decode-uri-component': ['http', false],
  'toad-cache': ['http', false],
  rfdc: ['http', false],
  'proxy-addr': ['http', false],
  forwarded: ['http', false],
  'ipaddr.js': ['http', false],
  'process-warning': ['http', false],
  'abstract-logging': ['http', false],
  fastq: ['http', false],
  reusify: ['http', false],
  'safe-regex2': ['http', false],
  ret: ['http', false],
  'content-type': ['http', false],
  'json-schema-ref-resolver': ['http', false],
  'fast-content-type-parse': ['http', false],
  // PostgreSQL driver
  pg: ['db', false],
  'pg-pool': ['db', false],
  'pg-protocol': ['db', false],
  'pg-types': ['db', false],
  'pg-connection-string': ['db', false],
  'pg-int8': ['db', false],
  'postgres-array': ['db', false],
  'postgres-bytea': ['db', false],
  'postgres-date': ['db', false],
  'postgres-interval': ['db', false],
  pgpass: ['db', false],
  split2: ['db', false],
  // firm
  ajv: ['validation', true],
  'ajv-formats': ['validation', true],
  'fast-deep-equal': ['validation', true],
  'fast-uri': ['validation', true],
  'json-schema-traverse': ['validation', true],
  'libpg-query': ['parse', true],
  '@libpg-query/': ['parse', true],
  'pgsql-parser': ['parse', true],
  pino: ['observe', true],
  'pino-std-serializers': ['observe', true],
  'sonic-boom': ['observe', true],
  'fast-redact': ['observe', true],
  '@pinojs/': ['observe', true],
  'quick-format-unescaped': ['observe', true],
  'thread-stream': ['observe', true],
  'on-exit-leak-free': ['observe', true],
  'atomic-sleep': ['observe', true],
  'safe-stable-stringify': ['observe', true],
  'prom-client': ['observe', true],
  '@opentelemetry/': ['observe', true],
  jose: ['session', true],
  ioredis: ['session', true],
};

/** Node's own modules that are a stage when nothing of pgmcp sits above them (soft). */
export const NODE_STAGES = {
  'node:http': 'http',
  'node:https': 'http',
  'node:_http_server': 'http',
  'node:_http_incoming': 'http',
  'node:_http_outgoing': 'http',
  'node:_http_common': 'http',
};

/** V8's own leaves ((root) is every stack's top and names nothing). */
const SPECIAL = {
  '(garbage collector)': 'gc',
  '(program)': 'program',
};

const own = (object, key) => (Object.hasOwn(object, key) ? object[key] : null);

/** The stage a path under src/ (`tools/tsv.ts`) maps to, or null when no rule names it. */
export function stageOfSource(file, functionName = '') {
  // Own properties only: a function may be called `constructor` or `toString`.
  const overrides = own(FUNCTION_STAGES, file);
  const override = overrides && own(overrides, functionName);
  if (override) return override;
  let best = null;
  for (const [key, stage] of Object.entries(SOURCE_STAGES)) {
    const matches = key.endsWith('/') ? file.startsWith(key) : file === key;
    if (matches && (best === null || key.length > best.key.length)) best = { key, stage };
  }
  return best?.stage ?? null;
}

function packageOf(url) {
  const at = url.lastIndexOf('/node_modules/');
  if (at === -1) return null;
  const parts = url.slice(at + '/node_modules/'.length).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

function packageRule(name) {
  const rule = own(PACKAGE_STAGES, name);
  if (rule) return rule;
  const scope = name.startsWith('@') ? `${name.split('/')[0]}/` : null;
  return scope ? own(PACKAGE_STAGES, scope) : null;
}

/**
 * What one frame says: { stage, firm } when it names a stage, { node: true } for Node's own
 * code that names none, { unknown: label } for a file or package no rule covers, or null (a
 * native frame, which passes the sample to its caller).
 */
export function classifyFrame(frame) {
  const { url, functionName } = frame;
  const special = own(SPECIAL, functionName);
  if (special) return { stage: special, firm: true };
  if (!url) return null;
  if (url.startsWith('wasm://')) return { stage: 'parse', firm: true };
  if (url.startsWith('node:')) {
    const stage = own(NODE_STAGES, url);
    return stage ? { stage, firm: false } : { node: true };
  }
  const pkg = packageOf(url);
  if (pkg !== null) {
    const rule = packageRule(pkg);
    return rule ? { stage: rule[0], firm: rule[1] } : { unknown: `package ${pkg}` };
  }
  const dist = url.lastIndexOf('/dist/');
  if (dist !== -1) {
    const file = url.slice(dist + '/dist/'.length).replace(/\.js$/, '.ts');
    const stage = stageOfSource(file, functionName);
    return stage ? { stage, firm: true } : { unknown: `dist/${file.replace(/\.ts$/, '.js')}` };
  }
  return { unknown: path.basename(url) };
}

/** A frame as `name file:line`, the file shortened to its package or dist/ path. */
function frameName({ functionName, url, lineNumber }) {
  const short = url
    .replace(/^file:\/\/.*\/node_modules\//, '')
    .replace(/^file:\/\/.*\/dist\//, 'dist/');
  return `${functionName || '(anonymous)'}${short ? ` ${short}:${lineNumber + 1}` : ''}`;
}

/**
 * Attributes a profile's samples taken between `from` and `to` (µs, the profile's clock: V8's
 * monotonic clock, which is process.hrtime's) to stages. Returns the busy samples per stage,
 * their total, and the files no rule named (samples each).
 *
 * Samples are counted, not weighted by their time deltas: V8's sampler signals the thread every
 * interval and a signal waits while the thread waits for a core, so a delta is wall time (a
 * sample taken after the thread was preempted for 40 ms carries 40 ms) while the count follows
 * the time the thread ran.
 */
export function attributeProfile(profile, { from = -Infinity, to = Infinity } = {}) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const memo = new Map();
  const stageOfNode = (id) => {
    if (memo.has(id)) return memo.get(id);
    let soft = null;
    let sawNode = false;
    let result = null;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const said = classifyFrame(byId.get(at).callFrame);
      if (said === null) continue;
      if (said.node) sawNode = true;
      else if (said.unknown) {
        // A file or package no rule names: shown, never folded into its caller's stage.
        result = { stage: 'unattributed', unknown: said.unknown };
        break;
      } else if (said.firm) {
        result = { stage: said.stage };
        break;
      } else soft ??= said.stage;
    }
    result ??= soft ? { stage: soft } : { stage: sawNode ? 'eventloop' : 'unattributed' };
    memo.set(id, result);
    return result;
  };
  const stages = Object.fromEntries(STAGES.map((s) => [s.key, 0]));
  const frames = Object.fromEntries(STAGES.map((s) => [s.key, new Map()]));
  const unknownFiles = {};
  let busy = 0;
  let idle = 0;
  let clock = profile.startTime;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    clock += us;
    if (clock < from || clock > to) return;
    const node = byId.get(id);
    if (!node) return;
    if (node.callFrame.functionName === '(idle)') {
      idle++;
      return;
    }
    busy++;
    const { stage, unknown } = stageOfNode(id);
    stages[stage]++;
    const leaf = frameName(node.callFrame);
    frames[stage].set(leaf, (frames[stage].get(leaf) ?? 0) + 1);
    if (unknown) unknownFiles[unknown] = (unknownFiles[unknown] ?? 0) + 1;
  });
  // Each stage's leaves with the most samples, for reading a row.
  const topFrames = Object.fromEntries(
    Object.entries(frames).map(([stage, map]) => [
      stage,
      Object.fromEntries([...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8)),
    ]),
  );
  return { stages, busySamples: busy, idleSamples: idle, unknownFiles, topFrames };
}

/**
 * The table for one profiled cell. The profile gives each stage's share of the main thread's
 * busy samples; the CPU comes from /proc: the main thread's is split by those shares, the
 * other threads and the child processes are rows of their own, so the rows add up to the CPU
 * of pgmcp's whole process tree per call.
 *   cpu: µs per call { mainThread, otherThreads, children }.
 */
export function stageRows(attributed, cpu) {
  const share = (key) =>
    attributed.busySamples > 0 ? (attributed.stages[key] ?? 0) / attributed.busySamples : 0;
  const rows = STAGES.map(({ key, label }) => ({
    key,
    label,
    usPerCall: cpu.mainThread === null ? null : cpu.mainThread * share(key),
  }));
  rows.push({ ...PROCESS_ROWS[0], usPerCall: cpu.otherThreads });
  rows.push({ ...PROCESS_ROWS[1], usPerCall: cpu.children });
  const parts = [cpu.mainThread, cpu.otherThreads, cpu.children];
  return {
    rows,
    totalUsPerCall: parts.some((v) => v === null) ? null : parts.reduce((a, b) => a + b, 0),
  };
}

const fmt = (value, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);

/**
 * The report's lines for the profiled cells, one column pair per variant:
 * cells: [{ name, concurrency, table (stageRows), source, profiled, unknownFiles }].
 */
export function formatStageTables(cells) {
  const lines = [];
  const width = 52;
  const head =
    `${'stage'.padEnd(width)}` +
    cells.map((c) => `${`${c.name} µs`.padStart(12)}${'%'.padStart(6)}`).join('');
  lines.push(head);
  lines.push('-'.repeat(head.length));
  for (const { key, label } of [...STAGES, ...PROCESS_ROWS]) {
    const parts = cells.map((c) => {
      const row = c.table.rows.find((r) => r.key === key);
      const share =
        row?.usPerCall != null && c.table.totalUsPerCall
          ? (100 * row.usPerCall) / c.table.totalUsPerCall
          : null;
      return `${fmt(row?.usPerCall).padStart(12)}${fmt(share).padStart(6)}`;
    });
    lines.push(`${label.padEnd(width)}${parts.join('')}`);
  }
  lines.push('-'.repeat(head.length));
  lines.push(
    `${'total: pgmcp process tree, CPU per call'.padEnd(width)}${cells
      .map((c) => `${fmt(c.table.totalUsPerCall).padStart(12)}${'100'.padStart(6)}`)
      .join('')}`,
  );
  for (const c of cells) {
    const p = c.profiled;
    lines.push(
      `  ${c.name}: CPU from ${c.source}; the profiled run (C=${c.concurrency}, ${c.calls} calls): main thread ` +
        `${fmt(p.mainThread)} µs per call (${p.busySamples} busy samples), other threads ${fmt(p.otherThreads)}, ` +
        `the profiler's thread ${fmt(p.profilerThread)}, child processes ${fmt(p.children)}`,
    );
    const unknown = Object.entries(c.unknownFiles ?? {}).sort((a, b) => b[1] - a[1]);
    if (unknown.length) {
      lines.push(
        `    unattributed: ${unknown
          .slice(0, 8)
          .map(([file, n]) => `${file} ${n} samples`)
          .join(', ')} (name them in bench/stages.mjs)`,
      );
    }
  }
  return lines;
}
