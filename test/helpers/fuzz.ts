// The hostile client of the fuzz suite (test/e2e/fuzz.test.ts, `npm run fuzz`): fast-check
// arbitraries for JSON-RPC messages, their mutations, batches, headers and bodies around the size
// limit, the REST routes the OpenAPI document lists; a raw HTTP request that never waits on a
// stream for long; and the checks every answer must pass: a status the error catalogue
// documents, a well-formed JSON-RPC answer (or `{error}` under /api), never a 5xx.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';

export const LEGACY = '2025-11-25';
export const MODERN = '2026-07-28';

/** The methods both eras know, a few they do not, and the notifications. */
export const METHODS = [
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
  'tasks/get',
  'tasks/list',
  'sampling/createMessage',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
] as const;

/** Strings that stay printable ASCII: node:http refuses anything else in a header. */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
});

/** Text with the odd characters parsers trip on: quotes, escapes, NUL, surrogates, emoji. */
const nastyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    "'",
    '"',
    '\\',
    '\u0000',
    '\ud800',
    '💥',
    '%00',
    '../../etc/passwd',
    '$1',
    'select 1; select 2',
    'SELECT pg_sleep(0.05)',
    'select * from pg_catalog.pg_class limit 3',
    '__proto__',
    'constructor',
  ),
);

const jsonId = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 12 }),
  fc.constant(null),
  fc.double(),
  fc.constant(true),
  fc.constant({ nested: 1 }),
  fc.constant([1]),
);

/** Any JSON value, sometimes with the prototype-pollution keys. */
const anyJson = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constant(JSON.parse('{"__proto__":{"polluted":1}}')) },
  { weight: 1, arbitrary: fc.constant({ constructor: { prototype: { polluted: 1 } } }) },
);

/** Params shaped like a method's real ones, with values that are sometimes wrong. */
function paramsFor(
  tools: readonly string[],
  prompts: readonly string[],
  resources: readonly string[],
) {
  const value = fc.oneof(nastyText, anyJson);
  return fc.oneof(
    fc.record(
      {
        name: fc.oneof(fc.constantFrom(...tools, ...prompts), nastyText, anyJson),
        arguments: fc.oneof(
          fc.dictionary(
            fc.constantFrom('query', 'sql', 'limit', 'table', 'schema', 'text', 'arg1', 'arg2'),
            value,
          ),
          anyJson,
        ),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        uri: fc.oneof(fc.constantFrom(...resources), nastyText),
        cursor: fc.oneof(nastyText, anyJson),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        protocolVersion: fc.oneof(
          fc.constantFrom(LEGACY, MODERN, '2025-06-18', '2024-11-05'),
          nastyText,
        ),
        capabilities: fc.oneof(fc.constant({}), anyJson),
        clientInfo: fc.oneof(fc.constant({ name: 'fuzz', version: '1' }), anyJson),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        level: fc.oneof(fc.constantFrom('debug', 'info', 'error', 'emergency'), value),
        requestId: jsonId,
        progressToken: jsonId,
        progress: fc.oneof(fc.double(), value),
        ref: anyJson,
        argument: anyJson,
      },
      { requiredKeys: [] },
    ),
    anyJson,
  );
}

function meta(): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      'io.modelcontextprotocol/protocolVersion': fc.oneof(
        fc.constant(MODERN),
        fc.constant(LEGACY),
        nastyText,
      ),
      'io.modelcontextprotocol/clientCapabilities': fc.oneof(
        fc.constant({}),
        fc.constant({ sampling: {}, elicitation: {} }),
        anyJson,
      ),
      'io.modelcontextprotocol/clientInfo': fc.oneof(
        fc.constant({ name: 'fuzz', version: '1' }),
        anyJson,
      ),
      progressToken: jsonId,
    },
    { requiredKeys: [] },
  );
}

export interface Surface {
  tools: readonly string[];
  prompts: readonly string[];
  resources: readonly string[];
}

/** One JSON-RPC message (request, notification, response or junk), as a value. */
export function message(surface: Surface, era: 'legacy' | 'modern'): fc.Arbitrary<unknown> {
  const params = paramsFor(surface.tools, surface.prompts, surface.resources);
  const withMeta = fc
    .tuple(params, meta(), fc.boolean())
    .map(([p, m, keep]) =>
      era === 'modern' && keep && p !== null && typeof p === 'object' && !Array.isArray(p)
        ? { ...(p as object), _meta: m }
        : p,
    );
  const request = fc.record(
    {
      jsonrpc: fc.oneof(
        { weight: 9, arbitrary: fc.constant('2.0') },
        { weight: 1, arbitrary: anyJson },
      ),
      id: jsonId,
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...METHODS) },
        { weight: 1, arbitrary: nastyText },
      ),
      params: withMeta,
    },
    { requiredKeys: ['jsonrpc', 'method'] },
  );
  const response = fc.record(
    { jsonrpc: fc.constant('2.0'), id: jsonId, result: anyJson, error: anyJson },
    { requiredKeys: ['jsonrpc'] },
  );
  return fc.oneof(
    { weight: 8, arbitrary: request },
    { weight: 1, arbitrary: response },
    { weight: 1, arbitrary: anyJson },
  );
}

/** A body: a message, a batch, a mutation of one, deep nesting, or one near the size limit. */
export function body(
  surface: Surface,
  era: 'legacy' | 'modern',
  limit: number,
): fc.Arbitrary<string> {
  const one = message(surface, era);
  const text = one.map((m) => JSON.stringify(m) ?? 'null');
  const mutated = fc
    .tuple(
      text,
      fc.nat(),
      fc.nat({ max: 20 }),
      fc.constantFrom('cut', 'insert', 'delete', 'double'),
      fc.string({ unit: 'binary', maxLength: 4 }),
    )
    .map(([t, at, n, op, s]) => {
      const i = t.length === 0 ? 0 : at % t.length;
      if (op === 'cut') return t.slice(0, i);
      if (op === 'insert') return t.slice(0, i) + s + t.slice(i);
      if (op === 'delete') return t.slice(0, i) + t.slice(i + n);
      return t + t;
    });
  const batch = fc.array(one, { maxLength: 5 }).map((b) => JSON.stringify(b));
  const deep = fc
    .tuple(fc.integer({ min: 100, max: 20_000 }), fc.constantFrom('[', '{"a":'), fc.boolean())
    .map(([depth, open, inParams]) => {
      const close = open === '[' ? ']' : '}';
      const nest = open.repeat(depth) + '1' + close.repeat(depth);
      return inParams
        ? `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query_database","arguments":{"query":"select 1","x":${nest}}}}`
        : nest;
    });
  const nearLimit = fc.tuple(text, fc.integer({ min: -64, max: 64 })).map(([t, delta]) => {
    const pad = Math.max(0, limit + delta - t.length);
    return t.startsWith('{')
      ? `{"pad":"${'x'.repeat(Math.max(0, pad - 10))}",${t.slice(1)}`
      : t + ' '.repeat(pad);
  });
  return fc.oneof(
    { weight: 6, arbitrary: text },
    { weight: 3, arbitrary: mutated },
    { weight: 2, arbitrary: batch },
    { weight: 1, arbitrary: deep },
    { weight: 1, arbitrary: nearLimit },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  );
}

/** A header: absent, the right one, or something else. */
function header(...right: string[]): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    {
      weight: right.length === 0 ? 0 : 6,
      arbitrary: right.length ? fc.constantFrom(...right) : fc.constant(''),
    },
    { weight: 2, arbitrary: headerText },
  );
}

/** `Mcp-Session-Id` values naming the test's live sessions by index (see `liveSession`). */
export const SESSION_SLOTS = ['@session0', '@session1', '@session2'] as const;

/** Headers of an MCP POST, each one sometimes wrong. */
export function mcpHeaders(): fc.Arbitrary<Record<string, string | undefined>> {
  return fc.record({
    'content-type': header(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json-seq',
    ),
    accept: header(
      'application/json, text/event-stream',
      'application/json',
      'text/event-stream',
      '*/*',
      'text/html',
    ),
    'mcp-session-id': header(...SESSION_SLOTS, '00000000-0000-4000-8000-000000000000'),
    'mcp-protocol-version': header(LEGACY, MODERN, '2025-06-18', '2099-01-01'),
    'mcp-method': header(...METHODS),
    'mcp-name': header('query_database', 'list_tables', 'nope'),
    'last-event-id': header('g:1', 'g:0', '1', 'p:1:1', 'x'),
    origin: fc.oneof(
      { weight: 9, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('http://evil.example', 'null') },
    ),
  });
}

/** The index of the live session a header names (`@sessionN`), or -1. */
export function sessionSlot(value: string | undefined): number {
  return SESSION_SLOTS.indexOf(value as (typeof SESSION_SLOTS)[number]);
}

export const HTTP_METHODS = [
  'POST',
  'POST',
  'POST',
  'POST',
  'GET',
  'DELETE',
  'PUT',
  'PATCH',
  'OPTIONS',
  'HEAD',
] as const;

// ---------------------------------------------------------------------------------------------
// Raw HTTP that gives up on a stream after a while (GET /mcp, subscriptions/listen and the chat
// stay open), keeping what arrived.

export interface FuzzResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The response ended on its own (a stream cut short by the client is not). */
  complete: boolean;
}

export function send(
  url: string,
  method: string,
  headers: Record<string, string | undefined>,
  body: string | undefined,
  streamMs = 1_500,
): Promise<FuzzResponse> {
  const sent: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) sent[k] = v;
  if (body !== undefined) sent['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: sent }, (res) => {
      let text = '';
      let done = false;
      const finish = (complete: boolean): void => {
        if (done) return;
        done = true;
        clearTimeout(cut);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, complete });
      };
      const cut = setTimeout(
        () => {
          finish(false);
          req.destroy();
        },
        String(res.headers['content-type']).startsWith('text/event-stream') ? streamMs : 30_000,
      );
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => finish(true));
      res.on('error', () => finish(false));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------
// What an answer must be.

/** The statuses docs/errors.md lists for the MCP endpoint and its refusals. */
export const MCP_STATUSES = new Set([200, 202, 400, 401, 403, 404, 405, 406, 413, 415, 429]);

/** Statuses documented for one HTTP method only: 409 is a second GET stream on a session. */
const METHOD_STATUSES: Record<string, number[]> = { GET: [409] };

/** Problems with one JSON-RPC message the server sent; empty when it is well-formed. */
export function rpcProblems(value: unknown, where: string): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return [`${where}: not an object`];
  const m = value as Record<string, unknown>;
  if (m['jsonrpc'] !== '2.0') return [`${where}: jsonrpc is ${JSON.stringify(m['jsonrpc'])}`];
  if ('method' in m) {
    return typeof m['method'] === 'string' ? [] : [`${where}: method is not a string`];
  }
  const id = m['id'];
  if (!(id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))) {
    return [`${where}: bad id ${JSON.stringify(id)}`];
  }
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult === hasError) return [`${where}: needs exactly one of result and error`];
  if (hasError) {
    const e = m['error'] as Record<string, unknown> | null;
    if (
      !e ||
      typeof e !== 'object' ||
      !Number.isInteger(e['code']) ||
      typeof e['message'] !== 'string'
    ) {
      return [`${where}: malformed error ${JSON.stringify(e)}`];
    }
    if (e['code'] === -32603 && /reference/i.test(String(e['message']))) {
      return [`${where}: an internal error (a bug) ${JSON.stringify(e)}`];
    }
  } else if (m['result'] === null || typeof m['result'] !== 'object') {
    return [`${where}: result is not an object`];
  }
  return [];
}

function sseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\n\n/)) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data !== '') out.push(data);
  }
  return out;
}

/** Problems with an answer of the MCP endpoint. */
export function mcpAnswerProblems(res: FuzzResponse, method: string): string[] {
  const where = `${method} → ${res.status}`;
  if (!MCP_STATUSES.has(res.status) && !METHOD_STATUSES[method]?.includes(res.status))
    return [`${where}: status not documented: ${res.text.slice(0, 300)}`];
  // HEAD has no body; nor do a notification's 202, a DELETE's 200 and the modern era's 405.
  const empty =
    res.status === 202 || res.status === 405 || (method === 'DELETE' && res.status === 200);
  if (method === 'HEAD' || (empty && res.text === '')) return [];
  const type = String(res.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    const problems: string[] = [];
    for (const data of sseMessages(res.text)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(data));
      } catch {
        problems.push(`${where}: SSE data is not JSON: ${String(data).slice(0, 200)}`);
        continue;
      }
      problems.push(...rpcProblems(parsed, where));
    }
    return problems;
  }
  if (!type.startsWith('application/json'))
    return [`${where}: content-type ${type}: ${res.text.slice(0, 200)}`];
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    return [`${where}: body is not JSON: ${res.text.slice(0, 200)}`];
  }
  const all = Array.isArray(parsed) ? parsed : [parsed];
  if (Array.isArray(parsed) && res.status !== 200)
    return [`${where}: a batch answer with status ${res.status}`];
  const problems = all.flatMap((m) => rpcProblems(m, where));
  if (res.status >= 400 && !Array.isArray(parsed) && !('error' in (parsed as object))) {
    problems.push(`${where}: a ${res.status} without a JSON-RPC error: ${res.text.slice(0, 200)}`);
  }
  return problems;
}

/** Problems with an answer of a REST route: never a 5xx, errors as `{"error": "…"}`. */
export function restAnswerProblems(res: FuzzResponse, what: string): string[] {
  const where = `${what} → ${res.status}`;
  if (res.status >= 500 || res.status < 200) return [`${where}: ${res.text.slice(0, 300)}`];
  if (res.status < 400 || what.startsWith('HEAD')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    return [`${where}: error body is not JSON: ${res.text.slice(0, 200)}`];
  }
  const error = (parsed as Record<string, unknown> | null)?.['error'];
  return typeof error === 'string' && error !== ''
    ? []
    : [`${where}: no {error}: ${res.text.slice(0, 200)}`];
}

// ---------------------------------------------------------------------------------------------
// REST operations from the OpenAPI document.

export interface RestOperation {
  method: string;
  /** The path template, e.g. /api/conversations/{id}. */
  path: string;
  /** Property names of the JSON body's schema, when it has one. */
  bodyKeys: string[];
}

export function restOperations(openapi: any): RestOperation[] {
  const out: RestOperation[] = [];
  for (const [path, item] of Object.entries<any>(openapi.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const schema = op?.requestBody?.content?.['application/json']?.schema;
      out.push({
        method: method.toUpperCase(),
        path: path.startsWith('/api') ? path : `/api${path}`,
        bodyKeys: Object.keys(schema?.properties ?? {}),
      });
    }
  }
  return out;
}

export function restCall(ops: readonly RestOperation[]) {
  const value = fc.oneof(nastyText, anyJson, fc.integer(), fc.constant(null));
  return fc.constantFrom(...ops).chain((op) =>
    fc.record({
      op: fc.constant(op),
      method: fc.oneof(
        { weight: 9, arbitrary: fc.constant(op.method) },
        { weight: 1, arbitrary: fc.constantFrom(...HTTP_METHODS) },
      ),
      path: fc
        .array(fc.oneof(fc.uuid(), fc.string({ maxLength: 20 }), fc.integer().map(String)), {
          minLength: 4,
          maxLength: 4,
        })
        .map((values) => {
          let i = 0;
          return op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[i++] ?? 'x'));
        }),
      query: fc.oneof(
        fc.constant(''),
        fc.constantFrom(
          '?limit=-1',
          '?limit=abc',
          '?cursor=%00',
          '?q=%E0%A4%A',
          '?limit=99999999999999999999',
        ),
      ),
      body: fc.oneof(
        {
          weight: 4,
          arbitrary: op.bodyKeys.length
            ? fc.dictionary(fc.constantFrom(...op.bodyKeys), value).map((b) => JSON.stringify(b))
            : fc.constant(undefined),
        },
        { weight: 2, arbitrary: anyJson.map((b) => JSON.stringify(b)) },
        { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      contentType: header('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
    }),
  );
}

/** A plausible chat body (UI messages), sometimes wrong. */
export function chatBody(): fc.Arbitrary<string> {
  const part = fc.oneof(
    fc.record({ type: fc.constant('text'), text: nastyText }),
    fc.record({ type: nastyText, text: anyJson }),
    anyJson,
  );
  const msg = fc.record(
    {
      id: fc.oneof(fc.uuid(), nastyText),
      role: fc.constantFrom('user', 'assistant', 'system', 'tool', 'x'),
      parts: fc.oneof(fc.array(part, { maxLength: 3 }), anyJson),
    },
    { requiredKeys: ['role'] },
  );
  return fc
    .record(
      {
        messages: fc.oneof(fc.array(msg, { minLength: 1, maxLength: 3 }), anyJson),
        id: fc.oneof(fc.uuid(), nastyText),
        trigger: fc.constantFrom('submit-message', 'regenerate-message', 'x'),
        database: nastyText,
        provider: nastyText,
        model: nastyText,
      },
      { requiredKeys: ['messages'] },
    )
    .map((b) => JSON.stringify(b));
}

/** How long each property may run: PGMCP_FUZZ_SECONDS split between them. */
export function budgetMs(share: number, defaultSeconds: number): number {
  const total = Number(process.env['PGMCP_FUZZ_SECONDS'] ?? defaultSeconds);
  return Math.max(1_000, Math.round(total * 1000 * share));
}

/**
 * fast-check's settings for one property: as many runs as fit in its share of the time budget
 * (budgetMs), stopping at the first failure, replayable with PGMCP_FUZZ_SEED.
 */
export function fuzzSettings(share: number, defaultSeconds: number): fc.Parameters<unknown> {
  const seed = process.env['PGMCP_FUZZ_SEED'];
  return {
    numRuns: 1_000_000,
    interruptAfterTimeLimit: budgetMs(share, defaultSeconds),
    endOnFailure: true,
    ...(seed ? { seed: Number(seed) } : {}),
  };
}

/** Log lines at level error or above (pino's JSON: level ≥ 50) and unhandled rejections. */
export function loggedErrors(stderr: string): string[] {
  return stderr.split('\n').filter((line) => {
    if (/unhandled rejection|uncaught/i.test(line)) return true;
    try {
      return (JSON.parse(line) as { level?: number }).level! >= 50;
    } catch {
      return false;
    }
  });
}
