// stdio transport: newline-delimited JSON-RPC on injected streams. The output stream
// carries protocol messages only; the process's logs go elsewhere (stderr).
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import type { Dispatcher } from './dispatcher.js';
import type { Exchange } from './exchange.js';
import {
  classify,
  errorResponse,
  recoverId,
  RpcCodes,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './jsonrpc.js';
import { createOutbound } from './outbound.js';
import { serialize } from './serialize.js';
import { createSession, type InFlight, type Session } from './session.js';
import { batchRefusal } from './versions.js';

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
  const cancelled = new Set<JsonRpcId>();
  const outbound = createOutbound('srv');
  const pending = new Set<Promise<void>>();

  const write = (message: unknown): void => {
    if (!output.writable) return;
    output.write(`${serialize(message)}\n`);
  };
  const session = createSession('stdio', (method, params) =>
    write({ jsonrpc: '2.0', method, params }),
  );
  const exchangeFor = (): Exchange => ({
    session,
    principal,
    inFlight,
    notify: (method, params) => write({ jsonrpc: '2.0', method, params }),
    request: (method, params, signal) => outbound.request(write, method, params, signal),
  });

  const handleOne = async (message: unknown): Promise<JsonRpcResponse | null> => {
    switch (classify(message)) {
      case 'request': {
        const request = message as JsonRpcRequest;
        const outcome = await dispatcher.handleRequest(request, exchangeFor());
        // A cancelled request is not answered (the client has stopped waiting for it).
        if (cancelled.delete(request.id)) return null;
        return outcome.response;
      }
      case 'notification': {
        const notification = message as JsonRpcNotification;
        if (notification.method === 'notifications/cancelled') {
          const id = notification.params?.['requestId'];
          if ((typeof id === 'string' || typeof id === 'number') && inFlight.has(id))
            cancelled.add(id);
        }
        dispatcher.handleNotification(notification, exchangeFor());
        return null;
      }
      case 'response':
        if (!outbound.settle(message as Record<string, unknown>)) {
          logger.debug('stdio: response to an unknown request ignored');
        }
        return null;
      default:
        return errorResponse(recoverId(message), {
          code: RpcCodes.INVALID_REQUEST,
          message: 'Invalid JSON-RPC message: expected {"jsonrpc":"2.0", "method", …}.',
        });
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
    if (Array.isArray(parsed)) {
      const refusal = batchRefusal(session.protocolVersion, parsed.length);
      if (refusal) {
        write(errorResponse(null, { code: RpcCodes.INVALID_REQUEST, message: refusal }));
        return;
      }
      track(
        Promise.all(parsed.map((m) => handleOne(m))).then((responses) => {
          const answered = responses.filter((r): r is JsonRpcResponse => r !== null);
          if (answered.length > 0) write(answered);
        }),
      );
      return;
    }
    track(
      handleOne(parsed).then(
        (response) => {
          if (response) write(response);
        },
        (error: unknown) => logger.error({ err: error }, 'stdio: unhandled failure'),
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
