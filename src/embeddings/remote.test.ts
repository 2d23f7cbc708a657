// Each provider against a local HTTP server that answers in that API's wire format.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAppError } from '../core/errors.js';
import { createRemoteProvider, type RemoteKind, type RemoteProviderSettings } from './remote.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}
type Reply = { status: number; body: unknown; headers?: Record<string, string> };

let server: Server;
let base: string;
let seen: Seen[] = [];
let script: ((req: Seen) => Reply)[] = [];

const vec = (seed: number, n = 3): number[] => Array.from({ length: n }, (_, i) => seed + i / 10);

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const entry: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
      };
      seen.push(entry);
      const handler: (req: Seen) => Reply =
        script.shift() ?? (() => ({ status: 500, body: { error: 'unscripted' } }));
      const reply = handler(entry);
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  script = [];
});

const settings = (over: Partial<RemoteProviderSettings>): RemoteProviderSettings => ({
  model: 'm1',
  dimensions: null,
  apiKeyEnv: 'TEST_KEY',
  apiKeyFile: null,
  baseUrl: null,
  batchSize: 16,
  timeoutMs: 5_000,
  maxRetries: 2,
  ...over,
});
const runtime = { env: { TEST_KEY: 'sk-test' }, wait: () => Promise.resolve() };
const provider = (kind: RemoteKind, over: Partial<RemoteProviderSettings>) =>
  createRemoteProvider(kind, settings(over), runtime);

const openAiReply = (req: Seen): Reply => {
  const input = req.body['input'] as string[];
  return {
    status: 200,
    body: {
      object: 'list',
      data: input.map((_, index) => ({ object: 'embedding', index, embedding: vec(index) })),
      model: req.body['model'],
      usage: { prompt_tokens: input.length * 2, total_tokens: input.length * 2 },
    },
  };
};

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a failure');
}

describe('openai', () => {
  it('sends batches to /embeddings with the key and the dimensions, and sums tokens', async () => {
    script = [openAiReply, openAiReply, openAiReply];
    const p = provider('openai', { baseUrl: `${base}/v1`, batchSize: 2, dimensions: 3 });
    const out = await p.embed(['a', 'b', 'c', 'd', 'e'], { purpose: 'document' });
    expect(out.vectors).toHaveLength(5);
    expect(out.vectors[2]).toEqual(vec(0));
    expect(out.tokens).toBe(10);
    expect(seen.map((s) => (s.body['input'] as string[]).length)).toEqual([2, 2, 1]);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/embeddings' });
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(seen[0]!.body).toMatchObject({ model: 'm1', dimensions: 3 });
  });

  it('retries a 429 and a 503 with backoff, then succeeds', async () => {
    const waits: number[] = [];
    script = [
      () => ({
        status: 429,
        body: { error: { message: 'slow down' } },
        headers: { 'retry-after': '0' },
      }),
      () => ({ status: 503, body: { error: { message: 'busy' } } }),
      openAiReply,
    ];
    const p = createRemoteProvider('openai', settings({ baseUrl: `${base}/v1` }), {
      ...runtime,
      baseDelayMs: 100,
      wait: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    await expect(p.embed(['x'])).resolves.toMatchObject({ vectors: [vec(0)] });
    expect(seen).toHaveLength(3);
    expect(waits[0]).toBe(0); // Retry-After: 0
    expect(waits[1]).toBeGreaterThanOrEqual(200); // 100 ms doubled for the second retry
  });

  it('gives up after maxRetries with a clear error', async () => {
    script = Array.from({ length: 3 }, () => () => ({
      status: 500,
      body: { error: { message: 'boom' } },
    }));
    const err = await failure(provider('openai', { baseUrl: `${base}/v1` }).embed(['x']));
    expect(err.code).toBe('PGMCP702');
    expect(err.message).toContain('HTTP 500');
    expect(seen).toHaveLength(3);
  });

  it('does not retry a 400', async () => {
    script = [() => ({ status: 400, body: { error: { message: 'bad input' } } })];
    const err = await failure(provider('openai', { baseUrl: `${base}/v1` }).embed(['x']));
    expect(err).toMatchObject({ code: 'PGMCP702' });
    expect(seen).toHaveLength(1);
  });

  it('names a missing key without sending anything', async () => {
    const p = createRemoteProvider('openai', settings({ baseUrl: `${base}/v1` }), { env: {} });
    const err = await failure(p.embed(['x']));
    expect(err.code).toBe('PGMCP701');
    expect(err.message).toContain('TEST_KEY');
    expect(seen).toHaveLength(0);
  });

  it('reads the key from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgmcp-key-'));
    writeFileSync(join(dir, 'key'), 'sk-from-file\n');
    script = [openAiReply];
    const p = createRemoteProvider(
      'openai',
      settings({ baseUrl: `${base}/v1`, apiKeyFile: join(dir, 'key') }),
      { env: {} },
    );
    await p.embed(['x']);
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-from-file');
  });

  it('says when the model does not exist', async () => {
    script = [
      () => ({
        status: 404,
        body: { error: { message: 'The model `m9` does not exist', code: 'model_not_found' } },
      }),
    ];
    const err = await failure(
      provider('openai', { baseUrl: `${base}/v1`, model: 'm9' }).embed(['x']),
    );
    expect(err.code).toBe('PGMCP703');
    expect(err.message).toContain("'m9'");
  });

  it('says when the vectors do not have the configured dimensions', async () => {
    script = [openAiReply];
    const err = await failure(
      provider('openai', { baseUrl: `${base}/v1`, dimensions: 4 }).embed(['x']),
    );
    expect(err.code).toBe('PGMCP704');
    expect(err.message).toContain('3 dimensions');
  });

  it('says when the provider cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await failure(
      provider('openai', { baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 }).embed(['x']),
    );
    expect(err.code).toBe('PGMCP702');
    expect(err.message).toContain('could not be reached');
  });
});

describe('an OpenAI-compatible endpoint', () => {
  it('works without a key at its own base URL', async () => {
    script = [openAiReply];
    const p = createRemoteProvider(
      'openaiCompatible',
      settings({ baseUrl: `${base}/compat/v1`, apiKeyEnv: null }),
      { env: {} },
    );
    await expect(p.embed(['x', 'y'])).resolves.toMatchObject({ tokens: 4 });
    expect(seen[0]!.url).toBe('/compat/v1/embeddings');
  });
});

describe('voyage', () => {
  it('posts input_type and output_dimension and reads data[].embedding', async () => {
    script = [
      (req) => ({
        status: 200,
        body: {
          object: 'list',
          data: (req.body['input'] as string[]).map((_, index) => ({
            object: 'embedding',
            embedding: vec(index + 1),
            index,
          })),
          model: 'voyage-3.5-lite',
          usage: { total_tokens: 7 },
        },
      }),
    ];
    const p = provider('voyage', { baseUrl: `${base}/v1`, dimensions: 3 });
    const out = await p.embed(['q'], { purpose: 'query' });
    expect(out).toEqual({ vectors: [vec(1)], tokens: 7 });
    expect(seen[0]!.url).toBe('/v1/embeddings');
    expect(seen[0]!.body).toMatchObject({ input: ['q'], input_type: 'query', output_dimension: 3 });
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-test');
  });
});

describe('ollama', () => {
  it('posts to /api/embed and reads embeddings and prompt_eval_count', async () => {
    script = [
      (req) => ({
        status: 200,
        body: {
          model: req.body['model'],
          embeddings: (req.body['input'] as string[]).map((_, i) => vec(i)),
          total_duration: 14143917,
          load_duration: 1019500,
          prompt_eval_count: 5,
        },
      }),
    ];
    const p = createRemoteProvider(
      'ollama',
      settings({ baseUrl: `${base}/api`, apiKeyEnv: null, model: 'nomic-embed-text' }),
      { env: {} },
    );
    await expect(p.embed(['a', 'b'])).resolves.toEqual({ vectors: [vec(0), vec(1)], tokens: 5 });
    expect(seen[0]).toMatchObject({
      url: '/api/embed',
      body: { model: 'nomic-embed-text', input: ['a', 'b'] },
    });
  });

  it('turns Ollama’s "not found, try pulling it" into an unknown-model error', async () => {
    script = [
      () => ({ status: 404, body: { error: 'model "nope" not found, try pulling it first' } }),
    ];
    const p = createRemoteProvider('ollama', settings({ baseUrl: `${base}/api`, model: 'nope' }), {
      env: {},
    });
    await expect(failure(p.embed(['a']))).resolves.toMatchObject({ code: 'PGMCP703' });
  });
});

describe('gemini', () => {
  it('posts batchEmbedContents with the key header and the task type', async () => {
    script = [
      (req) => ({
        status: 200,
        body: {
          embeddings: (req.body['requests'] as unknown[]).map((_, i) => ({ values: vec(i) })),
        },
      }),
    ];
    const p = provider('gemini', { baseUrl: `${base}/v1beta`, model: 'gemini-embedding-001' });
    const out = await p.embed(['a', 'b'], { purpose: 'document' });
    expect(out.vectors).toEqual([vec(0), vec(1)]);
    expect(seen[0]!.url).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(seen[0]!.headers['x-goog-api-key']).toBe('sk-test');
    expect((seen[0]!.body['requests'] as Record<string, unknown>[])[0]).toMatchObject({
      content: { parts: [{ text: 'a' }] },
      taskType: 'RETRIEVAL_DOCUMENT',
    });
  });
});
