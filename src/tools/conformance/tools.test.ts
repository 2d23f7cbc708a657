import { describe, expect, it } from 'vitest';
import { createFakeContext } from '../../testing/fake-context.js';
import { compileValidator } from '../validation.js';
import { PNG_MIME_TYPE, TINY_PNG_BASE64, TINY_WAV_BASE64 } from './media.js';
import {
  JSON_SCHEMA_2020_12_DIALECT,
  PACE_MS,
  RECONNECT_DELAY_MS,
  audioContent,
  embeddedResource,
  errorHandling,
  headerParamTool,
  imageContent,
  jsonSchema2020Tool,
  loggingTool,
  multipleContentTypes,
  reconnection,
  simpleText,
  toolWithLogging,
  toolWithProgress,
} from './tools.js';

// Timers are not exact; the suites only need the notifications spaced out and in order.
const SLACK_MS = 10;

describe('content tools', () => {
  it('test_simple_text returns the fixed text', async () => {
    const { ctx } = createFakeContext();
    expect(await simpleText.call({}, ctx)).toEqual({
      content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
    });
  });

  it('test_image_content returns a PNG image block', async () => {
    const { ctx } = createFakeContext();
    expect(await imageContent.call({}, ctx)).toEqual({
      content: [{ type: 'image', data: TINY_PNG_BASE64, mimeType: 'image/png' }],
    });
  });

  it('test_audio_content returns audio/wav exactly', async () => {
    const { ctx } = createFakeContext();
    expect(await audioContent.call({}, ctx)).toEqual({
      content: [{ type: 'audio', data: TINY_WAV_BASE64, mimeType: 'audio/wav' }],
    });
  });

  it('test_embedded_resource embeds the fixed text resource', async () => {
    const { ctx } = createFakeContext();
    expect(await embeddedResource.call({}, ctx)).toEqual({
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
    });
  });

  it('test_multiple_content_types returns text, image and JSON resource in that order', async () => {
    const { ctx } = createFakeContext();
    expect(await multipleContentTypes.call({}, ctx)).toEqual({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: TINY_PNG_BASE64, mimeType: PNG_MIME_TYPE },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: '{"test":"data","value":123}',
          },
        },
      ],
    });
  });

  it('test_error_handling is a tool error result, not a thrown error', async () => {
    const { ctx } = createFakeContext();
    expect(await errorHandling.call({}, ctx)).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    });
  });
});

describe('notifications during a call', () => {
  it('test_tool_with_logging sends the three info messages, spaced out', async () => {
    const { ctx, logs } = createFakeContext();
    const result = await toolWithLogging.call({}, ctx);
    expect(result.isError).toBeUndefined();
    expect(result.content[0]?.type).toBe('text');
    expect(logs.map((l) => [l.level, l.data])).toEqual([
      ['info', 'Tool execution started'],
      ['info', 'Tool processing data'],
      ['info', 'Tool execution completed'],
    ]);
    expect(logs[1]!.at - logs[0]!.at).toBeGreaterThanOrEqual(PACE_MS - SLACK_MS);
    expect(logs[2]!.at - logs[1]!.at).toBeGreaterThanOrEqual(PACE_MS - SLACK_MS);
  });

  it('test_tool_with_progress reports 0, 50, 100 of 100, spaced out', async () => {
    const { ctx, progress } = createFakeContext();
    await toolWithProgress.call({}, ctx);
    expect(progress.map((p) => [p.progress, p.total])).toEqual([
      [0, 100],
      [50, 100],
      [100, 100],
    ]);
    expect(progress[2]!.at - progress[0]!.at).toBeGreaterThanOrEqual(2 * PACE_MS - SLACK_MS);
  });

  it('stops pacing when the call is cancelled', async () => {
    const abort = new AbortController();
    abort.abort();
    const { ctx, progress } = createFakeContext({ signal: abort.signal });
    const started = performance.now();
    await toolWithProgress.call({}, ctx);
    expect(performance.now() - started).toBeLessThan(PACE_MS);
    expect(progress).toHaveLength(3);
  });

  it('test_logging_tool logs and answers well inside the 500 ms the suite waits', async () => {
    const { ctx, logs } = createFakeContext();
    const started = performance.now();
    const result = await loggingTool.call({}, ctx);
    expect(performance.now() - started).toBeLessThan(400);
    expect(result.content[0]?.type).toBe('text');
    expect(logs.length).toBeGreaterThan(0);
  });
});

describe('json_schema_2020_12_tool', () => {
  it('advertises the 2020-12 keywords verbatim', () => {
    const schema = jsonSchema2020Tool.inputSchema;
    expect(jsonSchema2020Tool.description).toBe('Tool with JSON Schema 2020-12 features');
    expect(schema.$schema).toBe(JSON_SCHEMA_2020_12_DIALECT);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.$defs).toMatchObject({ address: { $anchor: 'addressDef', type: 'object' } });
    expect(schema.properties).toMatchObject({ address: { $ref: '#/$defs/address' } });
    expect(schema.allOf).toEqual([{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }]);
    expect(Object.keys(schema)).toEqual(expect.arrayContaining(['if', 'then', 'else']));
  });

  it('validates with those keywords', () => {
    const validate = compileValidator(jsonSchema2020Tool.inputSchema, 'test');
    expect(validate({ name: 'Ada', email: 'ada@example.com' })).toBeNull();
    expect(validate({ contactMethod: 'phone', email: 'ada@example.com' })).not.toBeNull();
    expect(validate({ email: 'a@b.c', extra: 1 })).not.toBeNull();
  });
});

describe('test_header_param', () => {
  it('marks a required string argument with x-mcp-header', () => {
    const region = (
      headerParamTool.inputSchema.properties as Record<string, Record<string, unknown>>
    ).region;
    expect(region).toMatchObject({ type: 'string', 'x-mcp-header': 'Region' });
    expect(headerParamTool.inputSchema.required).toEqual(['region']);
  });

  it('accepts any string value, including ones that look like Base64', async () => {
    const { ctx } = createFakeContext();
    for (const value of ['Hello', 'SGVsbG8=', '=?base64?SGVsbG8=']) {
      const result = await headerParamTool.call({ region: value }, ctx);
      expect(result).toEqual({ content: [{ type: 'text', text: `Region: ${value}` }] });
    }
  });
});

describe('test_reconnection', () => {
  it('drops the stream first, then answers', async () => {
    const { ctx, disconnects } = createFakeContext();
    const result = await reconnection.call({}, ctx);
    expect(disconnects).toEqual([RECONNECT_DELAY_MS]);
    expect(result.isError).toBeUndefined();
    expect(result.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('closed mid-call'),
    });
  });

  it('still answers where the transport cannot drop the stream', async () => {
    const { ctx } = createFakeContext({ canDisconnect: false });
    const result = await reconnection.call({}, ctx);
    expect(result.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('cannot close'),
    });
  });
});
