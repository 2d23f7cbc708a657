// stdio transport: newline-delimited JSON-RPC on injected streams. The output stream
// carries protocol messages only; the process's logs go elsewhere (stderr).
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import type { RequestChannel } from './channel.js';
import type { Dispatcher } from './dispatcher.js';
import { deliver, inspect, type Link } from './inbound.js';
import { errorResponse, RpcCodes, type JsonRpcId } from './jsonrpc.js';
import { createOutbound } from './outbound.js';
import { serialize } from './serialize.js';
import { createSession, type InFlight, type Session } from './session.js';

export interface StdioServerOptions {
  dispatcher: Dispatcher;
  input: Readable;
  output: Writable;
  logger: Logger;
  principal?: Principal;
  /** Longest accepted line; longer input is answered with an error and skipped. */
  maxLineBytes?: number;
}

export interface StdioServer {
  readonly session: Session;
  /** Resolves when the input ends and every request in flight has been answered. */
  readonly closed: Promise<void>;
  close(): void;
}

export function startStdioServer(options: StdioServerOptions): StdioServer {
  const { dispatcher, input, output, logger } = options;
  const maxLine = options.maxLineBytes ?? 16 * 1024 * 1024;
  const principal = options.principal ?? ANONYMOUS;
  const inFlight: InFlight = new Map();
  // Requests the client cancelled: they are not answered (it has stopped waiting).
  const cancelled = new Set<JsonRpcId>();
  const outbound = createOutbound('srv');
  const pending = new Set<Promise<void>>();

  const write = (message: unknown): void => {
    if (!output.writable) return;
    output.write(`${serialize(message)}\n`);
  };
  const session = createSession(
    'stdio',
    (method, params) => write({ jsonrpc: '2.0', method, params }),
    principal,
  );
  const channel: RequestChannel = {
    session,
    principal,
    inFlight,
    notify: (method, params) => write({ jsonrpc: '2.0', method, params }),
    request: (method, params, signal) => outbound.request(write, method, params, signal),
    timing: (stage, durationMs) => logger.debug({ stage, durationMs }, 'stage timing'),
  };
  // One connection, one session: every request shares the same channel.
  const link: Link = { session, inFlight, outbound, cancelled, channel: () => channel };

  /** Handle one parsed line (a message or a batch) and write what it answers. */
  const handle = async (parsed: unknown): Promise<void> => {
    const delivery = await deliver(dispatcher, inspect(parsed), link);
    switch (delivery.kind) {
      case 'answered':
        write(delivery.outcome.response);
        return;
      case 'batch':
        if (delivery.responses.length > 0) write(delivery.responses);
        return;
      case 'refused':
        write(delivery.response);
        return;
      default:
        if (delivery.kind === 'accepted' && delivery.settled === false)
          logger.debug('stdio: response to an unknown request ignored');
    }
  };

  /** `awaited`: the end of input waits for it. subscriptions/listen is not: it ends only when
   * cancelled, so the end of input cancels it (below) instead of waiting for it forever. */
  const track = (work: Promise<void>, awaited = true): void => {
    if (!awaited) return;
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  const onLine = (line: string): void => {
    if (line.trim() === '') return;
    if (Buffer.byteLength(line) > maxLine) {
      write(
        errorResponse(null, {
          code: RpcCodes.INVALID_REQUEST,
          message: `Message larger than ${maxLine} bytes.`,
        }),
      );
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      write(
        errorResponse(null, {
          code: RpcCodes.PARSE_ERROR,
          message: 'Parse error: the line is not valid JSON.',
        }),
      );
      return;
    }
    track(
      handle(parsed).catch((error: unknown) =>
        logger.error({ err: error }, 'stdio: unhandled failure'),
      ),
      (parsed as { method?: unknown } | null)?.method !== 'subscriptions/listen',
    );
  };

  const lines = createInterface({ input, crlfDelay: Infinity });
  lines.on('line', onLine);
  const closed = new Promise<void>((resolve) => {
    lines.on('close', () => {
      // Nobody will answer a question sent to the client now: fail those calls at once, then
      // let the rest finish (each is bounded by its own timeout).
      outbound.closeAll('The client closed the connection.');
      void Promise.allSettled([...pending]).then(() => {
        for (const controller of inFlight.values()) controller.abort(new Error('stdin closed'));
        resolve();
      });
    });
  });
  output.on('error', (error) => logger.warn({ err: error }, 'stdio: output stream error'));

  return {
    session,
    closed,
    close() {
      lines.close();
    },
  };
}
