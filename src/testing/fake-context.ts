// A CallContext for unit tests: records progress and log calls, answers requestInput from a
// map, and can replay a handler the way the 2026-07-28 era does (re-run with the answers
// gathered so far until it completes). No protocol layer, no transport.
import { AppError, ErrorCodes } from '../core/errors.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import {
  INPUT_CAPABILITY,
  type CallContext,
  type InputRequest,
  type LogLevel,
} from '../core/specs.js';
import { InputRequiredSignal } from '../mcp/input-required.js';

export interface RecordedProgress {
  progress: number;
  total: number | undefined;
  message: string | undefined;
  /** performance.now() when the call was made, for tests of pacing. */
  at: number;
}

export interface RecordedLog {
  level: LogLevel;
  data: unknown;
  logger: string | undefined;
  at: number;
}

export interface FakeContextOptions {
  principal?: Principal;
  /** Client capabilities; default: elicitation, sampling and roots. */
  capabilities?: readonly string[];
  /** Answers by input-request key, as `inputResponses` would carry them. */
  answers?: Readonly<Record<string, unknown>>;
  signal?: AbortSignal;
}

export interface FakeContext {
  ctx: CallContext;
  progress: RecordedProgress[];
  logs: RecordedLog[];
  /** Every requestInput call that passed the capability check, in order. */
  inputRequests: Array<Record<string, InputRequest>>;
}

export const ALL_INPUT_CAPABILITIES: readonly string[] = ['elicitation', 'sampling', 'roots'];

export function createFakeContext(options: FakeContextOptions = {}): FakeContext {
  const capabilities = new Set(options.capabilities ?? ALL_INPUT_CAPABILITIES);
  const answers = options.answers ?? {};
  const progress: RecordedProgress[] = [];
  const logs: RecordedLog[] = [];
  const inputRequests: Array<Record<string, InputRequest>> = [];

  const ctx: CallContext = {
    principal: options.principal ?? ANONYMOUS,
    signal: options.signal ?? new AbortController().signal,
    progress(value, total, message) {
      progress.push({ progress: value, total, message, at: performance.now() });
    },
    log(level, data, logger) {
      logs.push({ level, data, logger, at: performance.now() });
    },
    clientSupports: (capability) => capabilities.has(capability),
    requestInput<K extends string>(requests: Record<K, InputRequest>): Promise<Record<K, unknown>> {
      const entries = Object.entries(requests) as Array<[K, InputRequest]>;
      for (const [, request] of entries) {
        const capability = INPUT_CAPABILITY[request.method];
        if (!capabilities.has(capability)) {
          return Promise.reject(
            new AppError(
              ErrorCodes.CAPABILITY_MISSING,
              `The client did not declare the ${capability} capability this call needs.`,
              { category: 'input', details: { requiredCapabilities: { [capability]: {} } } },
            ),
          );
        }
      }
      inputRequests.push({ ...requests });
      const missing: Record<string, InputRequest> = {};
      const result = {} as Record<K, unknown>;
      for (const [key, request] of entries) {
        if (Object.hasOwn(answers, key)) result[key] = answers[key];
        else missing[key] = request;
      }
      // What the modern era's requestInput throws: the protocol layer turns it into an
      // InputRequiredResult holding only the unanswered keys.
      if (Object.keys(missing).length > 0) return Promise.reject(new InputRequiredSignal(missing));
      return Promise.resolve(result);
    },
  };
  return { ctx, progress, logs, inputRequests };
}

export interface ReplayOutcome<T> {
  result: T;
  /** The unanswered requests of each round that ended input-required, in order. */
  rounds: Array<Record<string, InputRequest>>;
  /** The answers the final, completing run saw. */
  answers: Record<string, unknown>;
}

/**
 * Run `handler` as the modern era would: each time it stops on unanswered input, answer the
 * pending requests with `respond` and run it again from the start with everything gathered so
 * far (`round`: 0 for the first run, then 1, 2, … as a resumed requestState would count).
 * Gives up after `maxRounds` rounds.
 */
export async function replayUntilComplete<T>(
  handler: (ctx: CallContext, round: number) => Promise<T>,
  respond: (key: string, request: InputRequest) => unknown,
  options: Omit<FakeContextOptions, 'answers'> & { maxRounds?: number } = {},
): Promise<ReplayOutcome<T>> {
  const answers: Record<string, unknown> = {};
  const rounds: Array<Record<string, InputRequest>> = [];
  const maxRounds = options.maxRounds ?? 10;
  for (;;) {
    const { ctx } = createFakeContext({ ...options, answers });
    try {
      return { result: await handler(ctx, rounds.length), rounds, answers: { ...answers } };
    } catch (error) {
      if (!(error instanceof InputRequiredSignal)) throw error;
      rounds.push(error.requests);
      if (rounds.length > maxRounds)
        throw new Error(`Still asking for input after ${maxRounds} rounds.`);
      for (const [key, request] of Object.entries(error.requests))
        answers[key] = respond(key, request);
    }
  }
}
