// A scripted stand-in for an LLM provider's HTTP API, speaking the provider's real wire format,
// so the chat tests drive pgmcp through the providers' own client libraries:
//   openai    — POST …/chat/completions and …/responses (JSON, or SSE when `stream` is true),
//               GET …/models;
//   anthropic — POST …/messages (JSON, or SSE events when `stream` is true), GET …/models;
//   google    — POST …/models/<m>:generateContent and :streamGenerateContent (SSE), GET …/models;
//   ollama    — POST /api/chat (JSON, or NDJSON when `stream` is not false), GET /api/tags.
// Each model request consumes the next turn of the script (or asks the script function for one).
// `baseUrl` is what the provider's base-URL setting or environment variable takes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeFlavor = 'openai' | 'anthropic' | 'google' | 'ollama';

export interface FakeToolCall {
  name: string;
  args: Record<string, unknown>;
}

/**
 * One answer of the model: text, or tool calls (with text before them, optionally); or a fault:
 * `fail` answers the provider's error with that HTTP status (429, 500 …, with Retry-After when
 * `retryAfterSeconds` is given), `drop` starts a streamed answer and then cuts the connection.
 */
export type FakeTurn = (
  | { text: string }
  | { toolCalls: FakeToolCall[]; text?: string }
  | { fail: number; retryAfterSeconds?: number }
  | { drop: true }
) & {
  /** Token usage to report (default 100 in, 20 out). */
  usage?: { input: number; output: number };
  /** Answer only once this settles (a model that is slow to answer). */
  wait?: Promise<unknown>;
};

/** A model request as the fake saw it, with what tests usually look for pulled out. */
export interface FakeRequest {
  flavor: FakeFlavor;
  /** Which endpoint: chat (completions), responses, messages, generate (Gemini), ollama. */
  api: 'chat' | 'responses' | 'messages' | 'generate' | 'ollama';
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  stream: boolean;
  model: string;
  /** Names of the tools offered to the model. */
  toolNames: string[];
  /** The text of every tool result in the conversation sent, oldest first. */
  toolResults: string[];
  /** The last user message's text, if any. */
  lastUserText: string | null;
  /** The system prompt, if any. */
  system: string | null;
  /** Set when the client went away before the answer was complete. */
  aborted: boolean;
}

export type FakeScript = FakeTurn[] | ((request: FakeRequest, index: number) => FakeTurn);

export interface FakeLlmOptions {
  flavor: FakeFlavor;
  script: FakeScript;
  /** Model ids the models endpoint lists (default: one per flavor). */
  models?: string[];
  /** When set, requests without this key get the provider's 401. */
  apiKey?: string;
}

export interface FakeLlm {
  baseUrl: string;
  /** Every model request, in order, refused ones too (model listings are not recorded). */
  requests: FakeRequest[];
  close(): Promise<void>;
}

const DEFAULT_MODELS: Record<FakeFlavor, string[]> = {
  openai: ['gpt-fake-1', 'gpt-fake-2'],
  anthropic: ['claude-fake-1'],
  google: ['gemini-fake-1'],
  ollama: ['llama-fake:1b'],
};

const BASE_PATH: Record<FakeFlavor, string> = {
  openai: '/v1',
  anthropic: '/v1',
  google: '/v1beta',
  ollama: '',
};

export async function startFakeLlm(options: FakeLlmOptions): Promise<FakeLlm> {
  const { flavor } = options;
  const requests: FakeRequest[] = [];
  const models = options.models ?? DEFAULT_MODELS[flavor];
  let turnIndex = 0;
  let ids = 0;
  const nextId = (prefix: string): string => `${prefix}_${++ids}`;

  const nextTurn = (request: FakeRequest): FakeTurn | null => {
    const index = turnIndex++;
    if (typeof options.script === 'function') return options.script(request, index);
    return options.script[index] ?? null;
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake LLM failed: ${String(error)}` } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const refused = options.apiKey !== undefined && !hasKey(flavor, req, url, options.apiKey);
    if (req.method === 'GET') {
      if (refused) return sendJson(res, 401, errorBody(flavor, 'invalid api key'));
      return listModels(res, path, models, flavor);
    }
    const raw = await readBody(req);
    const body = (raw === '' ? {} : JSON.parse(raw)) as Record<string, unknown>;
    const api = apiOf(flavor, path);
    if (!api) return sendJson(res, 404, errorBody(flavor, `no such endpoint ${path}`));
    const request = describe(flavor, api, path, req, body);
    requests.push(request);
    res.on('close', () => {
      if (!res.writableFinished) request.aborted = true;
    });
    // Recorded, then refused: tests can see what key was sent.
    if (refused) return sendJson(res, 401, errorBody(flavor, 'invalid api key'));
    const turn = nextTurn(request);
    if (!turn) return sendJson(res, 500, errorBody(flavor, 'the fake LLM script is exhausted'));
    if (turn.wait) await turn.wait;
    if (res.destroyed) return;
    if ('fail' in turn) {
      if (turn.retryAfterSeconds !== undefined) {
        res.setHeader('retry-after', String(turn.retryAfterSeconds));
      }
      return sendJson(res, turn.fail, errorBody(flavor, `fake provider failure ${turn.fail}`));
    }
    if ('drop' in turn) {
      openSse(res);
      res.write(
        'data: {"id":"cut","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"par',
      );
      res.destroy();
      return;
    }
    const answer = normalize(turn, nextId);
    const model = request.model;
    switch (api) {
      case 'chat':
        return request.stream
          ? openaiChatStream(res, answer, model)
          : openaiChat(res, answer, model);
      case 'responses':
        return request.stream ? responsesStream(res, answer, model) : responses(res, answer, model);
      case 'messages':
        return request.stream
          ? anthropicStream(res, answer, model)
          : anthropicMessage(res, answer, model);
      case 'generate':
        return request.stream
          ? geminiStream(res, answer, model)
          : geminiGenerate(res, answer, model);
      case 'ollama':
        return request.stream ? ollamaStream(res, answer, model) : ollamaChat(res, answer, model);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${BASE_PATH[flavor]}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// --- requests -------------------------------------------------------------------------------

function hasKey(flavor: FakeFlavor, req: IncomingMessage, url: URL, key: string): boolean {
  switch (flavor) {
    case 'openai':
    case 'ollama':
      return req.headers.authorization === `Bearer ${key}`;
    case 'anthropic':
      return req.headers['x-api-key'] === key;
    case 'google':
      return req.headers['x-goog-api-key'] === key || url.searchParams.get('key') === key;
  }
}

function apiOf(flavor: FakeFlavor, path: string): FakeRequest['api'] | null {
  if (flavor === 'openai' && path.endsWith('/chat/completions')) return 'chat';
  if (flavor === 'openai' && path.endsWith('/responses')) return 'responses';
  if (flavor === 'anthropic' && path.endsWith('/messages')) return 'messages';
  if (flavor === 'google' && /:(stream)?generateContent$/i.test(path)) return 'generate';
  if (flavor === 'ollama' && path.endsWith('/api/chat')) return 'ollama';
  return null;
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Text of a content that is a string or a list of parts with `text`. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return list(content)
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}

function describe(
  flavor: FakeFlavor,
  api: FakeRequest['api'],
  path: string,
  req: IncomingMessage,
  body: Json,
): FakeRequest {
  const base = {
    flavor,
    api,
    path,
    headers: req.headers,
    body,
    aborted: false,
  };
  switch (api) {
    case 'chat': {
      const messages = list(body['messages']);
      const users = messages.filter((m) => m['role'] === 'user');
      const system = messages.find((m) => m['role'] === 'system' || m['role'] === 'developer');
      return {
        ...base,
        stream: body['stream'] === true,
        model: str(body['model']),
        toolNames: list(body['tools']).map((t) =>
          str((t['function'] as Json | undefined)?.['name']),
        ),
        toolResults: messages.filter((m) => m['role'] === 'tool').map((m) => textOf(m['content'])),
        lastUserText: users.length > 0 ? textOf(users[users.length - 1]!['content']) : null,
        system: system ? textOf(system['content']) : null,
      };
    }
    case 'responses': {
      const input = list(body['input']);
      const users = input.filter((m) => m['role'] === 'user');
      const system = input.find((m) => m['role'] === 'system' || m['role'] === 'developer');
      return {
        ...base,
        stream: body['stream'] === true,
        model: str(body['model']),
        toolNames: list(body['tools']).map((t) => str(t['name'])),
        toolResults: input
          .filter((m) => m['type'] === 'function_call_output')
          .map((m) =>
            typeof m['output'] === 'string' ? m['output'] : JSON.stringify(m['output']),
          ),
        lastUserText: users.length > 0 ? textOf(users[users.length - 1]!['content']) : null,
        system: system ? textOf(system['content']) : str(body['instructions']) || null,
      };
    }
    case 'messages': {
      const messages = list(body['messages']);
      const results: string[] = [];
      let lastUserText: string | null = null;
      for (const message of messages) {
        if (message['role'] !== 'user') continue;
        const parts =
          typeof message['content'] === 'string'
            ? [{ type: 'text', text: message['content'] }]
            : list(message['content']);
        for (const part of parts) {
          if (part['type'] === 'tool_result') results.push(textOf(part['content']));
        }
        const texts = parts.filter((p) => p['type'] === 'text');
        if (texts.length > 0) lastUserText = texts.map((p) => str(p['text'])).join('');
      }
      const system = body['system'];
      return {
        ...base,
        stream: body['stream'] === true,
        model: str(body['model']),
        toolNames: list(body['tools']).map((t) => str(t['name'])),
        toolResults: results,
        lastUserText,
        system: system === undefined ? null : textOf(system),
      };
    }
    case 'generate': {
      const contents = list(body['contents']);
      const results: string[] = [];
      let lastUserText: string | null = null;
      for (const content of contents) {
        const parts = list(content['parts']);
        for (const part of parts) {
          const response = part['functionResponse'] as Json | undefined;
          if (response) {
            // The AI SDK sends {name, content}; the content is the tool's text when it is text.
            const inner = response['response'] as Json | undefined;
            const content = inner?.['content'];
            results.push(
              typeof content === 'string'
                ? content
                : Array.isArray(content)
                  ? textOf(content)
                  : JSON.stringify(inner),
            );
          }
        }
        const texts = parts.filter((p) => typeof p['text'] === 'string');
        if (content['role'] === 'user' && texts.length > 0) {
          lastUserText = texts.map((p) => str(p['text'])).join('');
        }
      }
      const model = decodeURIComponent(path.split('/models/')[1]?.split(':')[0] ?? '');
      const system = body['systemInstruction'] as Json | undefined;
      return {
        ...base,
        stream: /:streamGenerateContent$/i.test(path),
        model,
        toolNames: list(body['tools']).flatMap((t) =>
          list(t['functionDeclarations']).map((d) => str(d['name'])),
        ),
        toolResults: results,
        lastUserText,
        system: system ? textOf(system['parts']) : null,
      };
    }
    case 'ollama': {
      const messages = list(body['messages']);
      const users = messages.filter((m) => m['role'] === 'user');
      const system = messages.find((m) => m['role'] === 'system');
      return {
        ...base,
        stream: body['stream'] !== false,
        model: str(body['model']),
        toolNames: list(body['tools']).map((t) =>
          str((t['function'] as Json | undefined)?.['name']),
        ),
        toolResults: messages.filter((m) => m['role'] === 'tool').map((m) => textOf(m['content'])),
        lastUserText: users.length > 0 ? textOf(users[users.length - 1]!['content']) : null,
        system: system ? textOf(system['content']) : null,
      };
    }
  }
}

// --- answers --------------------------------------------------------------------------------

interface Answer {
  text: string;
  calls: { id: string; name: string; args: Record<string, unknown>; json: string }[];
  input: number;
  output: number;
}

function normalize(turn: FakeTurn, nextId: (prefix: string) => string): Answer {
  const calls =
    'toolCalls' in turn
      ? turn.toolCalls.map((call) => ({
          id: nextId('call'),
          name: call.name,
          args: call.args,
          json: JSON.stringify(call.args),
        }))
      : [];
  return {
    text: 'text' in turn ? (turn.text ?? '') : '',
    calls,
    input: turn.usage?.input ?? 100,
    output: turn.usage?.output ?? 20,
  };
}

/** Text in two pieces, so clients see more than one delta. */
function pieces(text: string): string[] {
  if (text.length < 2) return text === '' ? [] : [text];
  const half = Math.ceil(text.length / 2);
  return [text.slice(0, half), text.slice(half)];
}

const now = (): number => Math.floor(Date.now() / 1000);

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function errorBody(flavor: FakeFlavor, message: string): Json {
  switch (flavor) {
    case 'openai':
      return { error: { message, type: 'invalid_request_error', param: null, code: null } };
    case 'anthropic':
      return { type: 'error', error: { type: 'invalid_request_error', message } };
    case 'google':
      return { error: { code: 400, message, status: 'INVALID_ARGUMENT' } };
    case 'ollama':
      return { error: message };
  }
}

function listModels(res: ServerResponse, path: string, models: string[], flavor: FakeFlavor): void {
  switch (flavor) {
    case 'openai':
      if (!path.endsWith('/models')) break;
      return sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: now(), owned_by: 'fake' })),
      });
    case 'anthropic':
      if (!path.endsWith('/models')) break;
      return sendJson(res, 200, {
        data: models.map((id) => ({
          type: 'model',
          id,
          display_name: id,
          created_at: new Date().toISOString(),
        })),
        has_more: false,
        first_id: models[0] ?? null,
        last_id: models[models.length - 1] ?? null,
      });
    case 'google':
      if (!path.endsWith('/models')) break;
      return sendJson(res, 200, {
        models: models.map((id) => ({
          name: `models/${id}`,
          displayName: id,
          supportedGenerationMethods: ['generateContent', 'countTokens'],
        })),
      });
    case 'ollama':
      if (!path.endsWith('/api/tags')) break;
      return sendJson(res, 200, {
        models: models.map((name) => ({
          name,
          model: name,
          modified_at: new Date().toISOString(),
          size: 1,
          digest: 'fake',
        })),
      });
  }
  sendJson(res, 404, errorBody(flavor, `no such endpoint ${path}`));
}

function openSse(res: ServerResponse, contentType = 'text/event-stream'): void {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
}

const sse = (res: ServerResponse, data: unknown, event?: string): void => {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
};

// OpenAI chat completions.
function openaiChat(res: ServerResponse, a: Answer, model: string): void {
  sendJson(res, 200, {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: now(),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: a.text === '' ? null : a.text,
          ...(a.calls.length > 0
            ? {
                tool_calls: a.calls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: c.json },
                })),
              }
            : {}),
        },
        finish_reason: a.calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: a.input,
      completion_tokens: a.output,
      total_tokens: a.input + a.output,
    },
  });
}

function openaiChatStream(res: ServerResponse, a: Answer, model: string): void {
  openSse(res);
  const chunk = (delta: Json, finish: string | null = null): Json => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: now(),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  sse(res, chunk({ role: 'assistant', content: '' }));
  for (const piece of pieces(a.text)) sse(res, chunk({ content: piece }));
  a.calls.forEach((c, index) => {
    sse(
      res,
      chunk({
        tool_calls: [
          { index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of pieces(c.json)) {
      sse(res, chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  sse(res, chunk({}, a.calls.length > 0 ? 'tool_calls' : 'stop'));
  sse(res, {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: now(),
    model,
    choices: [],
    usage: {
      prompt_tokens: a.input,
      completion_tokens: a.output,
      total_tokens: a.input + a.output,
    },
  });
  res.end('data: [DONE]\n\n');
}

// OpenAI responses.
function responsesUsage(a: Answer): Json {
  return {
    input_tokens: a.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: a.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: a.input + a.output,
  };
}

function responsesOutput(a: Answer): Json[] {
  const out: Json[] = [];
  if (a.text !== '') {
    out.push({
      type: 'message',
      id: 'msg_fake',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: a.text, annotations: [] }],
    });
  }
  for (const c of a.calls) {
    out.push({
      type: 'function_call',
      id: `fc_${c.id}`,
      call_id: c.id,
      name: c.name,
      arguments: c.json,
      status: 'completed',
    });
  }
  return out;
}

function responseEnvelope(model: string, status: string, extra: Json = {}): Json {
  return {
    id: 'resp_fake',
    object: 'response',
    created_at: now(),
    model,
    status,
    incomplete_details: null,
    ...extra,
  };
}

function responses(res: ServerResponse, a: Answer, model: string): void {
  sendJson(
    res,
    200,
    responseEnvelope(model, 'completed', { output: responsesOutput(a), usage: responsesUsage(a) }),
  );
}

function responsesStream(res: ServerResponse, a: Answer, model: string): void {
  openSse(res);
  let seq = 0;
  const send = (type: string, data: Json): void =>
    sse(res, { type, sequence_number: seq++, ...data }, type);
  send('response.created', { response: responseEnvelope(model, 'in_progress', { output: [] }) });
  const items = responsesOutput(a);
  items.forEach((item, outputIndex) => {
    if (item['type'] === 'message') {
      send('response.output_item.added', {
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', content: [] },
      });
      for (const piece of pieces(a.text)) {
        send('response.output_text.delta', {
          item_id: item['id'],
          output_index: outputIndex,
          content_index: 0,
          delta: piece,
          logprobs: [],
        });
      }
    } else {
      send('response.output_item.added', {
        output_index: outputIndex,
        item: { ...item, arguments: '', status: 'in_progress' },
      });
      for (const piece of pieces(str(item['arguments']))) {
        send('response.function_call_arguments.delta', {
          item_id: item['id'],
          output_index: outputIndex,
          delta: piece,
        });
      }
      send('response.function_call_arguments.done', {
        item_id: item['id'],
        output_index: outputIndex,
        arguments: item['arguments'],
      });
    }
    send('response.output_item.done', { output_index: outputIndex, item });
  });
  send('response.completed', {
    response: responseEnvelope(model, 'completed', { output: items, usage: responsesUsage(a) }),
  });
  res.end();
}

// Anthropic messages.
function anthropicMessage(res: ServerResponse, a: Answer, model: string): void {
  const content: Json[] = [];
  if (a.text !== '') content.push({ type: 'text', text: a.text });
  for (const c of a.calls)
    content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
  sendJson(res, 200, {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: a.calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: a.input, output_tokens: a.output },
  });
}

function anthropicStream(res: ServerResponse, a: Answer, model: string): void {
  openSse(res);
  const send = (type: string, data: Json): void => sse(res, { type, ...data }, type);
  send('message_start', {
    message: {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: a.input, output_tokens: 1 },
    },
  });
  let index = 0;
  if (a.text !== '') {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const piece of pieces(a.text)) {
      send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    }
    send('content_block_stop', { index });
    index++;
  }
  for (const c of a.calls) {
    send('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} },
    });
    for (const piece of pieces(c.json)) {
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: piece },
      });
    }
    send('content_block_stop', { index });
    index++;
  }
  send('message_delta', {
    delta: { stop_reason: a.calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: a.output },
  });
  send('message_stop', {});
  res.end();
}

// Gemini generateContent.
function geminiUsage(a: Answer): Json {
  return {
    promptTokenCount: a.input,
    candidatesTokenCount: a.output,
    totalTokenCount: a.input + a.output,
  };
}

function geminiCallParts(a: Answer): Json[] {
  return a.calls.map((c) => ({ functionCall: { name: c.name, args: c.args } }));
}

function geminiGenerate(res: ServerResponse, a: Answer, model: string): void {
  const parts: Json[] = [];
  if (a.text !== '') parts.push({ text: a.text });
  parts.push(...geminiCallParts(a));
  sendJson(res, 200, {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: geminiUsage(a),
    modelVersion: model,
  });
}

function geminiStream(res: ServerResponse, a: Answer, model: string): void {
  openSse(res);
  for (const piece of pieces(a.text)) {
    sse(res, {
      candidates: [{ content: { role: 'model', parts: [{ text: piece }] }, index: 0 }],
      modelVersion: model,
    });
  }
  sse(res, {
    candidates: [
      { content: { role: 'model', parts: geminiCallParts(a) }, finishReason: 'STOP', index: 0 },
    ],
    usageMetadata: geminiUsage(a),
    modelVersion: model,
  });
  res.end();
}

// Ollama /api/chat.
function ollamaLine(model: string, message: Json, done: boolean, a?: Answer): Json {
  return {
    model,
    created_at: new Date().toISOString(),
    message: { role: 'assistant', content: '', ...message },
    done,
    ...(done && a
      ? {
          done_reason: 'stop',
          total_duration: 1,
          load_duration: 1,
          prompt_eval_count: a.input,
          prompt_eval_duration: 1,
          eval_count: a.output,
          eval_duration: 1,
        }
      : {}),
  };
}

const ollamaCalls = (a: Answer): Json =>
  a.calls.length > 0
    ? { tool_calls: a.calls.map((c) => ({ function: { name: c.name, arguments: c.args } })) }
    : {};

function ollamaChat(res: ServerResponse, a: Answer, model: string): void {
  sendJson(res, 200, ollamaLine(model, { content: a.text, ...ollamaCalls(a) }, true, a));
}

function ollamaStream(res: ServerResponse, a: Answer, model: string): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const line = (value: Json): boolean => res.write(`${JSON.stringify(value)}\n`);
  for (const piece of pieces(a.text)) line(ollamaLine(model, { content: piece }, false));
  if (a.calls.length > 0) line(ollamaLine(model, ollamaCalls(a), false));
  line(ollamaLine(model, {}, true, a));
  res.end();
}
