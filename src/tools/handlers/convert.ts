// The registry's builders answer with JSON-RPC envelopes ({jsonrpc, id, result | error});
// these turn them into the tool layer's results, or AppErrors the protocol layer maps. What a
// handler answers is built from database values, so it passes the output screen on the way.
import type {
  ContentBlock,
  PromptMessage,
  PromptResult,
  ResourceContents,
  ResourceReadResult,
  ToolResult,
} from '../../core/content.js';
import { AppError, ErrorCodes, type ErrorCategory } from '../../core/errors.js';
import type { JsonSchema } from '../../core/json-schema.js';
import { screenPromptResult, screenResourceResult, screenToolResult } from '../output-screen.js';
import { compileValidator, type ArgumentValidator } from '../validation.js';

/** Until core/errors.ts has an auth code: refused because the caller is anonymous. */
export const AUTH_REQUIRED_CODE = ErrorCodes.AUTH_REQUIRED;

export interface EnvelopeError {
  code: number;
  message: string;
  data?: unknown;
}

type Envelope = { result: Record<string, unknown> } | { error: EnvelopeError };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function invalid(kind: string, name: string, why: string): AppError {
  return new AppError(
    ErrorCodes.DB_QUERY_FAILED,
    `The ${kind} handler ${name} returned an invalid response: ${why}. Build it with mcp.${kind}_result(...).`,
    { category: 'database' },
  );
}

export function parseEnvelope(kind: string, name: string, value: unknown): Envelope {
  if (!isObject(value)) throw invalid(kind, name, 'not a JSON object');
  const error = value['error'];
  if (isObject(error)) {
    return {
      error: {
        code: typeof error['code'] === 'number' ? error['code'] : -32603,
        message: typeof error['message'] === 'string' ? error['message'] : 'Error',
        ...(error['data'] !== undefined ? { data: error['data'] } : {}),
      },
    };
  }
  const result = value['result'];
  if (!isObject(result)) throw invalid(kind, name, 'neither "result" nor "error"');
  return { result };
}

const CATEGORY_BY_CODE: Record<number, ErrorCategory> = {
  [-32001]: 'auth',
  [-32002]: 'not_found',
  [-32602]: 'input',
};

/** An error envelope as the AppError the protocol layer understands. */
export function envelopeError(error: EnvelopeError, uri?: string): AppError {
  const category = CATEGORY_BY_CODE[error.code] ?? 'database';
  const code =
    category === 'auth'
      ? AUTH_REQUIRED_CODE
      : category === 'not_found'
        ? ErrorCodes.RESOURCE_NOT_FOUND
        : category === 'input'
          ? ErrorCodes.TOOL_INPUT_INVALID
          : ErrorCodes.DB_QUERY_FAILED;
  const details: Record<string, unknown> = { rpcCode: error.code };
  if (uri !== undefined) details['uri'] = uri;
  if (error.data !== undefined) details['data'] = error.data;
  return new AppError(code, error.message, { category, details });
}

function contentBlock(value: unknown): ContentBlock | null {
  if (!isObject(value) || typeof value['type'] !== 'string') return null;
  // The shapes are MCP's; a body that builds them by hand is trusted to follow them.
  if (value['type'] === 'text' && typeof value['text'] !== 'string') return null;
  return value as unknown as ContentBlock;
}

/**
 * The check of a tool's structuredContent against its outputSchema, compiled now (once per
 * handler, not per call); throws when the schema does not compile. MCP requires a tool with an
 * outputSchema to answer conforming structuredContent.
 */
export function compileOutputCheck(name: string, schema: JsonSchema): ArgumentValidator {
  return compileValidator(schema, `tool ${name} (outputSchema)`, { subject: 'structuredContent' });
}

export function toToolResult(
  name: string,
  value: unknown,
  checkOutput?: ArgumentValidator,
): ToolResult {
  const envelope = parseEnvelope('tool', name, value);
  if ('error' in envelope) {
    // Authentication stays a protocol error; anything else is a failed call the model can read.
    if (envelope.error.code === -32001) throw envelopeError(envelope.error);
    return screenToolResult({
      content: [{ type: 'text', text: envelope.error.message }],
      isError: true,
    });
  }
  const { result } = envelope;
  const raw = result['content'];
  if (!Array.isArray(raw)) throw invalid('tool', name, '"content" is not an array');
  const content: ContentBlock[] = [];
  for (const item of raw) {
    const block = contentBlock(item);
    if (!block) throw invalid('tool', name, 'a content block has no valid "type"');
    content.push(block);
  }
  const out: ToolResult = { content };
  if (isObject(result['structuredContent'])) out.structuredContent = result['structuredContent'];
  if (result['isError'] === true) out.isError = true;
  // A failed call's structuredContent is not held to the schema; a successful one is.
  if (checkOutput && out.isError !== true) {
    const issues =
      out.structuredContent === undefined
        ? ['structuredContent is missing']
        : checkOutput(out.structuredContent);
    if (issues) {
      throw invalid(
        'tool',
        name,
        `its structuredContent does not match its outputSchema (${issues[0]})`,
      );
    }
  }
  return screenToolResult(out);
}

export function toResourceResult(name: string, uri: string, value: unknown): ResourceReadResult {
  const envelope = parseEnvelope('resource', name, value);
  if ('error' in envelope) throw envelopeError(envelope.error, uri);
  const raw = envelope.result['contents'];
  if (!Array.isArray(raw)) throw invalid('resource', name, '"contents" is not an array');
  const contents: ResourceContents[] = raw.map((item) => {
    if (!isObject(item)) throw invalid('resource', name, 'a content is not an object');
    const itemUri = typeof item['uri'] === 'string' ? item['uri'] : uri;
    const mimeType = typeof item['mimeType'] === 'string' ? { mimeType: item['mimeType'] } : {};
    if (typeof item['blob'] === 'string') return { uri: itemUri, ...mimeType, blob: item['blob'] };
    if (typeof item['text'] === 'string') return { uri: itemUri, ...mimeType, text: item['text'] };
    // A JSON value where text was expected: serialise it rather than fail.
    if (item['text'] !== undefined)
      return { uri: itemUri, ...mimeType, text: JSON.stringify(item['text']) };
    throw invalid('resource', name, 'a content has neither "text" nor "blob"');
  });
  return screenResourceResult({ contents });
}

export function toPromptResult(name: string, value: unknown): PromptResult {
  const envelope = parseEnvelope('prompt', name, value);
  if ('error' in envelope) throw envelopeError(envelope.error);
  const raw = envelope.result['messages'];
  if (!Array.isArray(raw)) throw invalid('prompt', name, '"messages" is not an array');
  const messages: PromptMessage[] = raw.map((item) => {
    if (!isObject(item) || (item['role'] !== 'user' && item['role'] !== 'assistant'))
      throw invalid('prompt', name, 'a message needs role "user" or "assistant"');
    const content =
      typeof item['content'] === 'string'
        ? ({ type: 'text', text: item['content'] } as const)
        : contentBlock(item['content']);
    if (!content) throw invalid('prompt', name, 'a message has no valid content');
    return { role: item['role'], content };
  });
  const out: PromptResult = { messages };
  if (typeof envelope.result['description'] === 'string')
    out.description = envelope.result['description'];
  return screenPromptResult(out);
}
