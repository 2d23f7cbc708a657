// The third-party MCP clients' own traffic turned off before any of them is loaded (import this
// module first), and a record of every TCP connection this process opens, so a test can check
// that all of them went to loopback. Each switch below was found by reading the package's code
// for the hosts it sends to:
// - OpenAI Agents exports traces to api.openai.com unless tracing is disabled (also done with
//   setTracingDisabled(true) where the client is made);
// - Mastra's core sends usage events to PostHog unless MASTRA_TELEMETRY_DISABLED;
// - mcp-use sends anonymized telemetry to PostHog and Scarf unless
//   MCP_USE_ANONYMIZED_TELEMETRY=false;
// - LangChain traces to LangSmith only when LANGSMITH_TRACING / LANGCHAIN_TRACING_V2 is on.
// mcp-remote and the Inspector run as programs of their own: see lb-clients-spawned.ts.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

export const OFFLINE_ENV: Record<string, string> = {
  OPENAI_AGENTS_DISABLE_TRACING: '1',
  MASTRA_TELEMETRY_DISABLED: '1',
  MCP_USE_ANONYMIZED_TELEMETRY: 'false',
  LANGSMITH_TRACING: 'false',
  LANGCHAIN_TRACING_V2: 'false',
};
Object.assign(process.env, OFFLINE_ENV);
// Keys for the model providers must not be around: no client here is given a model.
for (const name of ['OPENAI_API_KEY', 'LANGSMITH_API_KEY', 'LANGCHAIN_API_KEY']) {
  delete process.env[name];
}

export interface OutboundWatch {
  /** Every host name looked up and every address connected to (or tried), in order. */
  destinations(): string[];
  stop(): void;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|localhost)$/;

export const isLoopback = (destination: string): boolean => LOOPBACK.test(destination);

/** Records the destinations of the TCP client sockets this process opens from now on. */
export function watchOutbound(): OutboundWatch {
  const seen: string[] = [];
  const onSocket = (message: unknown): void => {
    const socket = (message as { socket: Socket }).socket;
    socket.on('lookup', (_error, address, _family, host) => {
      seen.push(String(host), String(address));
    });
    socket.on('connectionAttempt', (ip: string) => seen.push(ip));
    socket.once('connect', () => {
      if (socket.remoteAddress) seen.push(socket.remoteAddress);
    });
  };
  // fetch (Node's own undici, or the npm package): the host before any connection is tried.
  const onConnect = (message: unknown): void => {
    seen.push((message as { connectParams: { hostname: string } }).connectParams.hostname);
  };
  subscribe('net.client.socket', onSocket);
  subscribe('undici:client:beforeConnect', onConnect);
  return {
    destinations: () => [...new Set(seen)],
    stop: () => {
      unsubscribe('net.client.socket', onSocket);
      unsubscribe('undici:client:beforeConnect', onConnect);
    },
  };
}
