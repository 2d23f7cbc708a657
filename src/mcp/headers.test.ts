import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../core/json-schema.js';
import { checkLegacyVersionHeader, checkModernHeaders, headerValue } from './headers.js';
import { RpcCodes, RpcError, type JsonRpcRequest } from './jsonrpc.js';
import {
  ALL_VERSIONS,
  LEGACY_VERSIONS,
  META_PROTOCOL_VERSION,
  MODERN_VERSIONS,
} from './versions.js';

const MODERN = MODERN_VERSIONS[0];

function request(method: string, params: Record<string, unknown> = {}): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { ...params, _meta: { [META_PROTOCOL_VERSION]: MODERN } },
  };
}

type Headers = Record<string, string | string[] | undefined>;

/** The headers a well-behaved modern client sends for `req`. */
function headersFor(req: JsonRpcRequest, extra: Headers = {}): Headers {
  const name =
    req.method === 'resources/read' ? req.params?.['uri'] : (req.params?.['name'] as unknown);
  return {
    'mcp-protocol-version': MODERN,
    'mcp-method': req.method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    ...extra,
  };
}

/** The RpcError checkModernHeaders throws (fails the test when it throws nothing). */
function mismatch(
  req: JsonRpcRequest,
  headers: Headers,
  schema?: (name: string) => JsonSchema | undefined,
): RpcError {
  let thrown: unknown;
  try {
    checkModernHeaders(req, headers, schema);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(RpcError);
  const error = thrown as RpcError;
  expect(error.code).toBe(RpcCodes.HEADER_MISMATCH);
  return error;
}

describe('headerValue', () => {
  it('trims, takes the first of repeated headers, and treats empty as absent', () => {
    expect(headerValue('  tools/list ')).toBe('tools/list');
    expect(headerValue(['first', 'second'])).toBe('first');
    expect(headerValue('')).toBeUndefined();
    expect(headerValue('   ')).toBeUndefined();
    expect(headerValue(undefined)).toBeUndefined();
    expect(headerValue([])).toBeUndefined();
  });
});

describe('checkModernHeaders: MCP-Protocol-Version', () => {
  it('accepts headers that agree with the body', () => {
    const req = request('tools/list');
    expect(() => checkModernHeaders(req, headersFor(req))).not.toThrow();
  });

  it('requires the header when _meta names a version', () => {
    const req = request('tools/list');
    const error = mismatch(req, { 'mcp-method': 'tools/list' });
    expect(error.message).toMatch(/MCP-Protocol-Version header is required/);
  });

  it('refuses a header that names another version, quoting both', () => {
    const req = request('tools/list');
    const error = mismatch(req, headersFor(req, { 'mcp-protocol-version': LEGACY_VERSIONS[0] }));
    expect(error.message).toContain(`(${LEGACY_VERSIONS[0]})`);
    expect(error.message).toContain(`(${MODERN})`);
  });

  it('compares the trimmed header, the first when repeated', () => {
    const req = request('tools/list');
    expect(() =>
      checkModernHeaders(req, headersFor(req, { 'mcp-protocol-version': ` ${MODERN} ` })),
    ).not.toThrow();
    expect(() =>
      checkModernHeaders(
        req,
        headersFor(req, { 'mcp-protocol-version': [MODERN, LEGACY_VERSIONS[0]] }),
      ),
    ).not.toThrow();
  });

  it('leaves a body without a _meta version to the dispatcher', () => {
    const req: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    expect(() => checkModernHeaders(req, { 'mcp-method': 'tools/list' })).not.toThrow();
  });
});

describe('checkModernHeaders: Mcp-Method and Mcp-Name', () => {
  it('requires Mcp-Method', () => {
    const req = request('tools/list');
    const error = mismatch(req, { 'mcp-protocol-version': MODERN });
    expect(error.message).toMatch(/Mcp-Method header is required .*\(tools\/list\)/);
  });

  it('refuses an Mcp-Method that differs from the body', () => {
    const req = request('tools/list');
    const error = mismatch(req, headersFor(req, { 'mcp-method': 'prompts/list' }));
    expect(error.message).toBe(
      'Mcp-Method header (prompts/list) does not match the body method (tools/list).',
    );
  });

  it.each([
    ['tools/call', { name: 'query_database', arguments: {} }, 'query_database'],
    ['prompts/get', { name: 'write_query' }, 'write_query'],
    ['resources/read', { uri: 'pg://settings' }, 'pg://settings'],
  ])('%s: Mcp-Name must repeat the body', (method, params, expected) => {
    const req = request(method, params);
    expect(() => checkModernHeaders(req, headersFor(req))).not.toThrow();

    const missing = mismatch(req, headersFor(req, { 'mcp-name': undefined }));
    expect(missing.message).toBe(
      `The Mcp-Name header is required for ${method} and must equal the body (${expected}).`,
    );
    const other = mismatch(req, headersFor(req, { 'mcp-name': 'something_else' }));
    expect(other.message).toBe(
      `Mcp-Name header (something_else) does not match the body (${expected}).`,
    );
  });

  it('ignores Mcp-Name on methods that name nothing', () => {
    const req = request('tools/list');
    expect(() =>
      checkModernHeaders(req, headersFor(req, { 'mcp-name': 'anything' })),
    ).not.toThrow();
  });

  it('checks the version before the method, and the method before the name', () => {
    const req = request('tools/call', { name: 'a' });
    expect(mismatch(req, { 'mcp-method': 'x', 'mcp-name': 'b' }).message).toMatch(
      /MCP-Protocol-Version/,
    );
    expect(
      mismatch(req, { 'mcp-protocol-version': MODERN, 'mcp-method': 'x', 'mcp-name': 'b' }).message,
    ).toMatch(/Mcp-Method/);
  });
});

describe('checkModernHeaders: Mcp-Param-* for mirrored arguments', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      limit: { type: 'integer', 'x-mcp-header': 'Limit' },
      note: { type: 'string' },
    },
  };
  const schemas = (name: string): JsonSchema | undefined => (name === 'sales' ? schema : undefined);
  const call = (args: Record<string, unknown>, name = 'sales') =>
    request('tools/call', { name, arguments: args });
  const base64 = (text: string): string => `=?base64?${Buffer.from(text).toString('base64')}?=`;

  it('accepts headers that repeat the mirrored arguments (compared as text)', () => {
    const req = call({ region: 'eu-west', limit: 10, note: 'not mirrored' });
    const headers = headersFor(req, { 'mcp-param-region': 'eu-west', 'mcp-param-limit': '10' });
    expect(() => checkModernHeaders(req, headers, schemas)).not.toThrow();
  });

  it('requires the header of an argument that is present', () => {
    const req = call({ region: 'eu-west' });
    const error = mismatch(req, headersFor(req), schemas);
    expect(error.message).toBe(
      'The Mcp-Param-Region header is required: it must repeat argument region.',
    );
  });

  it('refuses a header whose argument is absent or null', () => {
    for (const args of [{}, { region: null }]) {
      const req = call(args);
      const error = mismatch(req, headersFor(req, { 'mcp-param-region': 'eu-west' }), schemas);
      expect(error.message).toBe('Mcp-Param-Region is set but argument region is absent.');
    }
  });

  it('accepts neither header nor argument', () => {
    const req = call({ note: 'x' });
    expect(() => checkModernHeaders(req, headersFor(req), schemas)).not.toThrow();
  });

  it('refuses a header that differs from the argument', () => {
    const req = call({ region: 'eu-west' });
    const error = mismatch(req, headersFor(req, { 'mcp-param-region': 'us-east' }), schemas);
    expect(error.message).toBe('Mcp-Param-Region does not match argument region.');
  });

  it('decodes =?base64?…?= values as UTF-8', () => {
    const req = call({ region: 'Zürich ☃' });
    const headers = headersFor(req, { 'mcp-param-region': base64('Zürich ☃') });
    expect(() => checkModernHeaders(req, headers, schemas)).not.toThrow();
    const wrong = headersFor(req, { 'mcp-param-region': base64('Zurich') });
    expect(mismatch(req, wrong, schemas).message).toMatch(/does not match argument region/);
  });

  it('refuses Base64 that is not strict', () => {
    const req = call({ region: 'eu' });
    for (const value of ['=?base64?ZXU?=', '=?base64?ZX*1?=', '=?base64?ZXU=x?=']) {
      const error = mismatch(req, headersFor(req, { 'mcp-param-region': value }), schemas);
      expect(error.message).toBe('Mcp-Param-Region holds invalid Base64.');
    }
  });

  it('applies only to tools/call of a tool whose schema is known', () => {
    const unknownTool = call({ region: 'eu-west' }, 'other');
    expect(() => checkModernHeaders(unknownTool, headersFor(unknownTool), schemas)).not.toThrow();
    const noLookup = call({ region: 'eu-west' });
    expect(() => checkModernHeaders(noLookup, headersFor(noLookup))).not.toThrow();
    const prompt = request('prompts/get', { name: 'sales', arguments: { region: 'eu' } });
    expect(() => checkModernHeaders(prompt, headersFor(prompt), schemas)).not.toThrow();
  });
});

describe('checkLegacyVersionHeader', () => {
  it('accepts every version served, and no header at all', () => {
    expect(ALL_VERSIONS.length).toBeGreaterThan(1);
    for (const version of ALL_VERSIONS) {
      expect(checkLegacyVersionHeader({ 'mcp-protocol-version': version })).toBeUndefined();
    }
    expect(checkLegacyVersionHeader({})).toBeUndefined();
  });

  it('names an unsupported version and the supported ones', () => {
    expect(checkLegacyVersionHeader({ 'mcp-protocol-version': '1999-01-01' })).toBe(
      `Unsupported MCP-Protocol-Version: 1999-01-01. Supported: ${ALL_VERSIONS.join(', ')}.`,
    );
  });

  it('judges the trimmed value, the first when repeated', () => {
    expect(
      checkLegacyVersionHeader({ 'mcp-protocol-version': ` ${LEGACY_VERSIONS[0]} ` }),
    ).toBeUndefined();
    expect(
      checkLegacyVersionHeader({ 'mcp-protocol-version': ['1999-01-01', LEGACY_VERSIONS[0]] }),
    ).toMatch(/^Unsupported MCP-Protocol-Version: 1999-01-01\./);
  });
});
