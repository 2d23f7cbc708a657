import { describe, expect, it } from 'vitest';
import { AppError } from '../core/errors.js';
import { WITHHELD } from './credentials.js';
import {
  screenError,
  screenPromptResult,
  screenResourceResult,
  screenToolResult,
  screenValue,
  type Tally,
} from './output-screen.js';

const SCRAM = 'SCRAM-SHA-256$4096:c2FsdA==$aGFzaA==:a2V5';
const MD5 = 'md5' + '0123456789abcdef'.repeat(2);
const b64 = (text: string): string => Buffer.from(text, 'latin1').toString('base64');

describe('screenValue', () => {
  it('returns ordinary values as they are, without copying', () => {
    const value = {
      name: 'alice',
      note: 'password reset requested',
      n: 2,
      at: new Date(0),
      tags: ['md5 checksum', null],
      raw: Buffer.from('plain'),
    };
    const tally: Tally = { count: 0 };
    expect(screenValue(value, tally)).toBe(value);
    expect(tally.count).toBe(0);
  });

  it('withholds strings, members at any depth and bytes, and counts them', () => {
    const tally: Tally = { count: 0 };
    const value = {
      hash: SCRAM,
      nested: { list: ['ok', MD5, { conn: 'host=db password=hunter2' }] },
      raw: Buffer.from(MD5),
    };
    expect(screenValue(value, tally)).toEqual({
      hash: WITHHELD,
      nested: { list: ['ok', WITHHELD, { conn: WITHHELD }] },
      raw: WITHHELD,
    });
    expect(tally.count).toBe(4);
    expect(value.hash).toBe(SCRAM); // the original is not touched
  });

  it('screens the text of a JSON value member by member, other text whole', () => {
    const tally: Tally = { count: 0 };
    const json = JSON.stringify([{ name: 'bob', hash: MD5 }]);
    expect(JSON.parse(screenValue(json, tally))).toEqual([{ name: 'bob', hash: WITHHELD }]);
    expect(screenValue(`bob ${MD5}`, tally)).toBe(WITHHELD);
    expect(screenValue('{user=bob,password=secret}', tally)).toBe(WITHHELD);
    expect(tally.count).toBe(3);
  });

  it('judges bytea hex text by its bytes: bytea[] elements, composites, jsonb members', () => {
    const hex = (text: string): string => `\\x${Buffer.from(text, 'latin1').toString('hex')}`;
    const tally: Tally = { count: 0 };
    // A bytea[] or a bytea inside a composite comes back through to_json as hex text.
    expect(screenValue([hex(SCRAM), '\\x0102', hex('plain text')], tally)).toEqual([
      WITHHELD,
      '\\x0102',
      hex('plain text'),
    ]);
    // A record's text form quotes the bytea with its backslash doubled.
    expect(screenValue(`(alice,"\\${hex(MD5)}")`, tally)).toBe(WITHHELD);
    // jsonb text: the member alone is withheld, the rest written out again.
    const doc = JSON.stringify({ name: 'bob', raw: hex('host=db password=hunter2') });
    expect(JSON.parse(screenValue(doc, tally))).toEqual({ name: 'bob', raw: WITHHELD });
    expect(tally.count).toBe(3);
    // Hex that decodes to nothing of the kind, and a lone `\x`, pass.
    const plain: Tally = { count: 0 };
    expect(screenValue(['C:\\x86\\bin', hex('md5 of the file'), '\\xzz'], plain)).toEqual([
      'C:\\x86\\bin',
      hex('md5 of the file'),
      '\\xzz',
    ]);
    expect(plain.count).toBe(0);
  });

  it('scans megabytes of bytea hex without failing', () => {
    const big = `\\x${'00'.repeat(6_000_000)}${Buffer.from(MD5).toString('hex')}`;
    const tally: Tally = { count: 0 };
    expect(screenValue([big], tally)).toEqual([WITHHELD]);
    const plain = `\\x${'ab'.repeat(6_000_000)}`;
    expect(screenValue(plain, tally)).toBe(plain);
    expect(tally.count).toBe(1);
  });

  it('withholds an object whose key reads like a credential', () => {
    const tally: Tally = { count: 0 };
    expect(screenValue({ outer: { [MD5]: true } }, tally)).toEqual({ outer: WITHHELD });
    expect(tally.count).toBe(1);
  });
});

describe('results', () => {
  it('screens a tool result and adds the note as its last block', () => {
    const result = screenToolResult({
      content: [
        { type: 'text', text: `hash ${SCRAM}` },
        { type: 'image', data: b64(`x ${MD5} y`), mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'a://b', blob: b64(SCRAM) } },
      ],
      structuredContent: { hash: MD5 },
    });
    expect(result).toEqual({
      content: [
        { type: 'text', text: WITHHELD },
        { type: 'text', text: WITHHELD },
        { type: 'resource', resource: { uri: 'a://b', mimeType: 'text/plain', text: WITHHELD } },
        { type: 'text', text: expect.stringMatching(/^4 values withheld as \[credential/) },
      ],
      structuredContent: { hash: WITHHELD },
    });
  });

  it('leaves an ordinary result the same object', () => {
    const result = {
      content: [{ type: 'text' as const, text: 'ok' }],
      structuredContent: { a: 1 },
    };
    expect(screenToolResult(result)).toBe(result);
    const read = { contents: [{ uri: 'a://b', text: 'fine' }] };
    expect(screenResourceResult(read)).toBe(read);
  });

  it('screens resource contents and prompts', () => {
    expect(screenResourceResult({ contents: [{ uri: 'a://b', text: SCRAM }] })).toEqual({
      contents: [
        { uri: 'a://b', text: WITHHELD },
        { uri: 'a://b', mimeType: 'text/plain', text: expect.stringMatching(/^1 value withheld/) },
      ],
    });
    const prompt = screenPromptResult({
      messages: [{ role: 'user', content: { type: 'text', text: MD5 } }],
    });
    expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: WITHHELD });
    expect(prompt.description).toMatch(/^1 value withheld/);
  });
});

describe('screenError', () => {
  it('withholds lines and fields that carry a credential, keeping their labels', () => {
    const error = new AppError('PGMCP202', `ERROR P0001: no: ${MD5}\nDETAIL: ${MD5}\nHINT: ask`, {
      category: 'database',
      details: { sqlstate: 'P0001', detail: MD5, hint: 'ask' },
      cause: new Error(MD5),
    });
    const screened = screenError(error) as AppError;
    expect(screened.message.split('\n')).toEqual([
      `ERROR P0001: ${WITHHELD}`,
      `DETAIL: ${WITHHELD}`,
      'HINT: ask',
      expect.stringMatching(/^3 values withheld/),
    ]);
    expect(screened.details).toEqual({ sqlstate: 'P0001', detail: WITHHELD, hint: 'ask' });
    expect(screened.code).toBe('PGMCP202');
    expect(screened.category).toBe('database');
    expect(screened.cause).toBeUndefined();
  });

  it('returns other errors as they are', () => {
    const error = new AppError('PGMCP202', 'ERROR 42P01: no such table', { category: 'database' });
    expect(screenError(error)).toBe(error);
    const bug = new Error(MD5);
    expect(screenError(bug)).toBe(bug);
  });
});
