// Builds the CallContext a handler sees, for either era.
import type { Principal } from '../core/principal.js';
import {
  LOG_LEVELS,
  type CallContext,
  type DatabaseChoice,
  type InputRequest,
  type LogLevel,
} from '../core/specs.js';
import type { RequestChannel } from './channel.js';
import { requireInputCapabilities } from './input-required.js';
import { isObject } from './jsonrpc.js';

export interface ContextInput {
  channel: RequestChannel;
  principal: Principal;
  signal: AbortSignal;
  progressToken: string | number | undefined;
  logLevel: LogLevel | null;
  clientCapabilities: Record<string, unknown>;
  /** Provided by the modern era (input-required rounds); the legacy era asks the client directly. */
  requestInput?: CallContext['requestInput'];
  /** Several databases: the session's choice among them. */
  database?: DatabaseChoice;
}

export interface BuiltContext {
  ctx: CallContext;
  /** Stop emitting progress and logs: the request is answered. */
  finish(): void;
}

const rank = (level: LogLevel): number => LOG_LEVELS.indexOf(level);

export function buildContext(input: ContextInput): BuiltContext {
  const { channel, progressToken, logLevel, clientCapabilities } = input;
  let done = false;
  let lastProgress = -Infinity;

  const legacyRequestInput = async <K extends string>(
    requests: Record<K, InputRequest>,
  ): Promise<Record<K, unknown>> => {
    const entries = Object.entries(requests) as [K, InputRequest][];
    requireInputCapabilities(requests, clientCapabilities);
    const out = {} as Record<K, unknown>;
    for (const [key, request] of entries) {
      out[key] = await channel.request(request.method, request.params, input.signal);
    }
    return out;
  };

  const ctx: CallContext = {
    principal: input.principal,
    signal: input.signal,
    progress(progress, total, message) {
      if (done || progressToken === undefined || !(progress > lastProgress)) return;
      lastProgress = progress;
      const params: Record<string, unknown> = { progressToken, progress };
      if (total !== undefined) params['total'] = total;
      if (message !== undefined) params['message'] = message;
      channel.notify('notifications/progress', params);
    },
    log(level, data, logger) {
      if (done || logLevel === null || rank(level) < rank(logLevel)) return;
      const params: Record<string, unknown> = { level, data };
      if (logger !== undefined) params['logger'] = logger;
      channel.notify('notifications/message', params);
    },
    clientSupports: (capability) => isObject(clientCapabilities[capability]),
    requestInput: input.requestInput ?? legacyRequestInput,
    timing: (stage, durationMs) => channel.timing?.(stage, durationMs),
    ...(input.database ? { database: input.database } : {}),
  };
  return {
    ctx,
    finish() {
      done = true;
    },
  };
}

export function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const meta = params['_meta'];
  if (!isObject(meta)) return undefined;
  const token = meta['progressToken'];
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
