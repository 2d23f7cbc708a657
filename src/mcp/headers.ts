// Streamable HTTP header rules that are MCP's, not HTTP's: kept here so http/ only wires them.
import { isObject, RpcCodes, RpcError, type JsonRpcRequest } from './jsonrpc.js';
import { ALL_VERSIONS, META_PROTOCOL_VERSION } from './versions.js';

type HeaderValue = string | string[] | undefined;
const one = (value: HeaderValue): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.trim();

/**
 * Modern era: MCP-Protocol-Version must repeat the _meta version, and Mcp-Method /
 * Mcp-Name must agree with the body. Throws RpcError(-32020).
 */
export function checkModernHeaders(
  request: JsonRpcRequest,
  headers: Record<string, HeaderValue>,
): void {
  const meta = request.params?.['_meta'];
  const version = isObject(meta) ? meta[META_PROTOCOL_VERSION] : undefined;
  const headerVersion = one(headers['mcp-protocol-version']);
  // A missing _meta version is the envelope's problem (-32602), judged by the dispatcher.
  if (version !== undefined && headerVersion !== version) {
    throw new RpcError(
      RpcCodes.HEADER_MISMATCH,
      headerVersion === undefined
        ? 'The MCP-Protocol-Version header is required and must equal _meta protocolVersion.'
        : `MCP-Protocol-Version header (${headerVersion}) does not match _meta protocolVersion (${String(version)}).`,
    );
  }
  const method = one(headers['mcp-method']);
  if (method !== request.method) {
    throw new RpcError(
      RpcCodes.HEADER_MISMATCH,
      method === undefined
        ? `The Mcp-Method header is required and must equal the body method (${request.method}).`
        : `Mcp-Method header (${method}) does not match the body method (${request.method}).`,
    );
  }
  const params = request.params ?? {};
  const expected =
    request.method === 'resources/read'
      ? params['uri']
      : NAMED.has(request.method)
        ? params['name']
        : undefined;
  const name = one(headers['mcp-name']);
  if (expected !== undefined && name !== expected) {
    throw new RpcError(
      RpcCodes.HEADER_MISMATCH,
      name === undefined
        ? `The Mcp-Name header is required for ${request.method} and must equal the body (${String(expected)}).`
        : `Mcp-Name header (${name}) does not match the body (${String(expected)}).`,
    );
  }
}

/** Methods whose params.name the Mcp-Name header repeats. */
const NAMED = new Set(['tools/call', 'prompts/get']);

/** Legacy era: a present MCP-Protocol-Version must name a version we serve. */
export function checkLegacyVersionHeader(headers: Record<string, HeaderValue>): string | undefined {
  const value = one(headers['mcp-protocol-version']);
  if (value !== undefined && !ALL_VERSIONS.includes(value)) {
    return `Unsupported MCP-Protocol-Version: ${value}. Supported: ${ALL_VERSIONS.join(', ')}.`;
  }
  return undefined;
}
