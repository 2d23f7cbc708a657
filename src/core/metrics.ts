// What pgmcp counts, as events the layers report without knowing how they are kept. The one
// implementation (Prometheus, with prom-client) is built where the app is composed (cli/) and
// handed down; every layer below sees only this interface, so `db`, `tools` or `llm` never
// import the HTTP side. Every label value passed here must come from a bounded set: a
// configured name, a registered tool, a fixed word. Never SQL, a caller's text or an id.

/** How a tool call ended, as an operator tells them apart. */
export type ToolCallOutcome = 'ok' | 'tool_error' | 'refused' | 'timeout';

/** The families of HTTP routes (labels of the request counter). */
export type RouteFamily =
  'mcp' | 'api' | 'oauth' | 'health' | 'probe' | 'metrics' | 'web' | 'other';

export interface Metrics {
  /** An HTTP request was answered (any route; SSE streams when they end). */
  httpRequest(event: { family: RouteFamily; status: number; seconds: number }): void;
  /** An MCP request was answered (HTTP or stdio); `method` is a known method or 'other'. */
  mcpRequest(event: {
    method: string;
    era: string;
    outcome: 'ok' | 'error';
    seconds: number;
  }): void;
  /** A tool call ended (MCP or the chat agent); `tool` is registered or 'unknown'. */
  toolCall(event: {
    tool: string;
    database: string;
    outcome: ToolCallOutcome;
    seconds: number;
  }): void;
  /** A PostgreSQL error reached a caller; only the SQLSTATE's class (two characters) is kept. */
  postgresError(event: { sqlstate: string }): void;
  /** A request was refused by the rate limit. */
  rateLimited(event: { family: string }): void;
  /** A request was refused for its credentials (the challenge's kind). */
  authFailure(event: { reason: string }): void;
  /** One call to a language model ended. */
  llmRequest(event: {
    provider: string;
    model: string;
    outcome: 'ok' | 'error';
    seconds: number;
    inputTokens: number;
    outputTokens: number;
  }): void;
  /** One request to an embedding provider ended. */
  embeddingRequest(event: {
    provider: string;
    outcome: 'ok' | 'error';
    texts: number;
    seconds: number;
  }): void;
}

const nothing = (): void => undefined;

/** Metrics off: every event is dropped. */
export const NO_METRICS: Metrics = {
  httpRequest: nothing,
  mcpRequest: nothing,
  toolCall: nothing,
  postgresError: nothing,
  rateLimited: nothing,
  authFailure: nothing,
  llmRequest: nothing,
  embeddingRequest: nothing,
};

/** The SQLSTATE class of a code, or null when it is not a SQLSTATE. */
export function sqlstateClass(code: unknown): string | null {
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code.slice(0, 2) : null;
}
