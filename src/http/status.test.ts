// The HTTP status of each MCP answer, per era (http/status.ts).
import { describe, expect, it } from 'vitest';
import type { ErrorCategory } from '../core/errors.js';
import { errorResponse, resultResponse, RpcCodes } from '../mcp/jsonrpc.js';
import { statusOf } from './status.js';

const failed = (era: 'legacy' | 'modern', code: number, category?: ErrorCategory) =>
  statusOf({ response: errorResponse(1, { code, message: 'x' }), era, category });

describe('statusOf', () => {
  it('answers results with 200 in both eras', () => {
    expect(statusOf({ response: resultResponse(1, {}), era: 'legacy' })).toBe(200);
    expect(statusOf({ response: resultResponse(1, { isError: true }), era: 'modern' })).toBe(200);
  });

  it('answers 401 for a caller who must authenticate and 403 for one without the role', () => {
    for (const era of ['legacy', 'modern'] as const) {
      expect(failed(era, RpcCodes.AUTH_REQUIRED, 'auth')).toBe(401);
      expect(failed(era, RpcCodes.AUTH_REQUIRED, 'forbidden')).toBe(403);
    }
  });

  it('keeps legacy-era errors in a 200 body, except a header mismatch', () => {
    for (const code of Object.values(RpcCodes)) {
      expect(failed('legacy', code), `code ${code}`).toBe(
        code === RpcCodes.HEADER_MISMATCH ? 400 : 200,
      );
    }
    expect(failed('legacy', RpcCodes.RESOURCE_NOT_FOUND, 'not_found')).toBe(200);
  });

  it('maps modern-era request errors to 400', () => {
    for (const code of [
      RpcCodes.PARSE_ERROR,
      RpcCodes.INVALID_REQUEST,
      RpcCodes.INVALID_PARAMS,
      RpcCodes.HEADER_MISMATCH,
      RpcCodes.MISSING_CAPABILITY,
      RpcCodes.UNSUPPORTED_VERSION,
    ]) {
      expect(failed('modern', code), `code ${code}`).toBe(400);
    }
  });

  it('maps an unknown method and a missing resource to 404 in the modern era', () => {
    expect(failed('modern', RpcCodes.METHOD_NOT_FOUND)).toBe(404);
    expect(failed('modern', RpcCodes.INVALID_PARAMS, 'not_found')).toBe(404);
    expect(failed('modern', RpcCodes.INVALID_PARAMS, 'input')).toBe(400);
  });

  it("answers a handler's failure in the body and the core's own with 500 (modern era)", () => {
    expect(failed('modern', RpcCodes.INTERNAL_ERROR, 'internal')).toBe(200);
    expect(failed('modern', RpcCodes.INTERNAL_ERROR, 'unavailable')).toBe(200);
    expect(failed('modern', RpcCodes.INTERNAL_ERROR)).toBe(500);
    expect(failed('legacy', RpcCodes.INTERNAL_ERROR)).toBe(200);
  });

  it('keeps 401/403 for -32001: a database permission error is not an auth challenge', () => {
    expect(failed('modern', RpcCodes.INTERNAL_ERROR, 'forbidden')).toBe(200);
    expect(failed('legacy', RpcCodes.INTERNAL_ERROR, 'auth')).toBe(200);
    expect(failed('modern', RpcCodes.INTERNAL_ERROR, 'not_found')).toBe(200);
  });
});
