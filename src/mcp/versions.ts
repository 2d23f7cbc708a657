// Protocol revisions served. Legacy era: initialize + sessions. Modern era: stateless
// requests carrying their version in _meta.

export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const MODERN_VERSIONS = ['2026-07-28'] as const;
export const ALL_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...LEGACY_VERSIONS];
export const LATEST_LEGACY = LEGACY_VERSIONS[0];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

export function isLegacyVersion(version: string): boolean {
  return (LEGACY_VERSIONS as readonly string[]).includes(version);
}

export function isModernVersion(version: string): boolean {
  return (MODERN_VERSIONS as readonly string[]).includes(version);
}

/**
 * The version to answer an initialize with: the requested one when we speak it; otherwise
 * our newest legacy version (an unknown newer version negotiates down; initialize is never
 * rejected for its version).
 */
export function negotiateLegacy(requested: unknown): string {
  if (typeof requested === 'string' && isLegacyVersion(requested)) return requested;
  return LATEST_LEGACY;
}

/** Batches (JSON arrays) exist only in 2025-03-26. Returns why a batch is refused, or null. */
export function batchRefusal(version: string | null, size: number): string | null {
  return version === '2025-03-26' && size > 0
    ? null
    : 'Batches are only accepted with protocol version 2025-03-26 and must not be empty.';
}
