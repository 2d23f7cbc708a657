// Conformance tools that need nothing from the client: fixed content of every kind, an error
// result, logging and progress on the request's stream, schema passthrough, a header-mirrored
// argument and the SSE-polling disconnect. Texts the suites compare are kept verbatim.
import { textResult } from '../../core/content.js';
import { EMPTY_OBJECT_SCHEMA } from '../../core/json-schema.js';
import type { ToolSpec } from '../../core/specs.js';
import { PNG_MIME_TYPE, TINY_PNG_BASE64, TINY_WAV_BASE64, WAV_MIME_TYPE } from './media.js';
import { pause } from './support.js';

/** Milliseconds between paced notifications; the suites expect "~50 ms". */
export const PACE_MS = 50;

export const JSON_SCHEMA_2020_12_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * Uses $defs/$ref/$anchor, allOf/anyOf and if/then/else so that any layer which rewrites or
 * trims schemas shows up in json-schema-2020-12 (SEP-1613, SEP-2106): it must come back verbatim.
 */
export const JSON_SCHEMA_2020_12_INPUT = {
  $schema: JSON_SCHEMA_2020_12_DIALECT,
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

const noArgs = EMPTY_OBJECT_SCHEMA;

export const simpleText: ToolSpec = {
  name: 'test_simple_text',
  description: 'Returns one fixed text block (conformance: tools-call-simple-text).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async () => textResult('This is a simple text response for testing.'),
};

export const imageContent: ToolSpec = {
  name: 'test_image_content',
  description: 'Returns a small PNG image block (conformance: tools-call-image).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async () => ({
    content: [{ type: 'image', data: TINY_PNG_BASE64, mimeType: PNG_MIME_TYPE }],
  }),
};

export const audioContent: ToolSpec = {
  name: 'test_audio_content',
  description: 'Returns a short WAV audio block (conformance: tools-call-audio).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async () => ({
    content: [{ type: 'audio', data: TINY_WAV_BASE64, mimeType: WAV_MIME_TYPE }],
  }),
};

export const embeddedResource: ToolSpec = {
  name: 'test_embedded_resource',
  description: 'Returns an embedded text resource (conformance: tools-call-embedded-resource).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }),
};

export const multipleContentTypes: ToolSpec = {
  name: 'test_multiple_content_types',
  description:
    'Returns text, an image and an embedded JSON resource (conformance: tools-call-mixed-content).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: TINY_PNG_BASE64, mimeType: PNG_MIME_TYPE },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  }),
};

export const errorHandling: ToolSpec = {
  name: 'test_error_handling',
  description:
    'Always fails with a tool error result, isError: true (conformance: tools-call-error).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async () => ({
    isError: true,
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
  }),
};

export const toolWithLogging: ToolSpec = {
  name: 'test_tool_with_logging',
  description:
    'Sends three info log messages about 50 ms apart while it runs (conformance: tools-call-with-logging).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(_args, ctx) {
    ctx.log('info', 'Tool execution started');
    await pause(PACE_MS, ctx.signal);
    ctx.log('info', 'Tool processing data');
    await pause(PACE_MS, ctx.signal);
    ctx.log('info', 'Tool execution completed');
    return textResult('Logging test finished: three info messages were sent.');
  },
};

export const toolWithProgress: ToolSpec = {
  name: 'test_tool_with_progress',
  description:
    'Reports progress 0, 50 and 100 of 100 about 50 ms apart (conformance: tools-call-with-progress).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(_args, ctx) {
    ctx.progress(0, 100);
    await pause(PACE_MS, ctx.signal);
    ctx.progress(50, 100);
    await pause(PACE_MS, ctx.signal);
    ctx.progress(100, 100);
    return textResult('Progress test finished at 100/100.');
  },
};

/** 2026-07-28 server-stateless: logs, which must not reach a client that set no logLevel. */
export const loggingTool: ToolSpec = {
  name: 'test_logging_tool',
  description:
    'Logs two messages and returns at once; they are delivered only when the request set a log level (conformance: server-stateless).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(_args, ctx) {
    ctx.log('info', 'Logging tool called');
    ctx.log('debug', 'Logging tool finished');
    return textResult('Logged two messages (info, debug).');
  },
};

export const jsonSchema2020Tool: ToolSpec = {
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features',
  inputSchema: JSON_SCHEMA_2020_12_INPUT,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async (args) => textResult(`Arguments accepted: ${JSON.stringify(args)}`),
};

/**
 * An argument mirrored into the `Mcp-Param-Region` header (SEP-2243): the HTTP layer must decode
 * `=?base64?…?=` values, take anything else literally, and reject a mismatch or a missing header.
 */
export const headerParamTool: ToolSpec = {
  name: 'test_header_param',
  description:
    'Echoes a region that the client also sends as the Mcp-Param-Region header (conformance: http-custom-header-server-validation).',
  inputSchema: {
    type: 'object',
    properties: {
      region: {
        type: 'string',
        description: 'Any region name; mirrored into Mcp-Param-Region.',
        'x-mcp-header': 'Region',
      },
    },
    required: ['region'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async (args) => textResult(`Region: ${String(args.region)}`),
};

/** Delay after dropping the stream, so the result is produced while the client is away. */
export const RECONNECT_DELAY_MS = 200;

/**
 * 2025-11-25 server-sse-polling (SEP-1699): drops the POST's SSE connection mid-call; the
 * result must reach the client on its GET with Last-Event-ID. Where the transport cannot drop
 * the stream, it simply answers.
 */
export const reconnection: ToolSpec = {
  name: 'test_reconnection',
  description:
    'Closes its SSE stream mid-call and answers after the client reconnects with Last-Event-ID (conformance: server-sse-polling).',
  inputSchema: noArgs,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async call(_args, ctx) {
    const dropped = ctx.disconnectStream(RECONNECT_DELAY_MS);
    await pause(RECONNECT_DELAY_MS, ctx.signal);
    return textResult(
      dropped
        ? 'Reconnection test finished: the stream was closed mid-call and this result was replayed.'
        : 'Reconnection test finished: this transport cannot close the stream mid-call.',
    );
  },
};

export const contentTools: readonly ToolSpec[] = [
  simpleText,
  imageContent,
  audioContent,
  embeddedResource,
  multipleContentTypes,
  errorHandling,
  toolWithLogging,
  toolWithProgress,
  loggingTool,
  jsonSchema2020Tool,
  headerParamTool,
  reconnection,
];
