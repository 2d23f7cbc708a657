// One way to run a tool, whatever front end asked: an MCP tools/call (mcp/methods/tools.ts) or
// the chat agent (llm/chat-tools.ts). The step looks the tool up, gates it (tools/gate.ts),
// validates the arguments with the registry's compiled validator, runs the call in the front
// end's CallContext, checks a success against the tool's outputSchema, and sorts what happened
// into one outcome by the error table (core/error-table.ts): a result, the tool's own failure,
// or a bug answered only with a log reference. It also records the call, whatever became of
// it, for the exchange log and the audit (tools/tool-call-record.ts), so both front ends record
// the same codes. Each edge only turns the outcome into its wire form.
import { noteServersOf } from '../core/request-scope.js';
import type { ToolResult } from '../core/content.js';
import {
  isExpectedFailure,
  logWithReference,
  newReference,
  RpcCodes,
  type ReferenceLog,
} from '../core/error-table.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { CallContext, ToolSpec } from '../core/specs.js';
import { inSpan } from '../core/tracing.js';
import { canUse, inScope } from './gate.js';
import type { Registry } from './registry.js';
import { toolCallRecord, toolErrorCode, type ToolCallSink } from './tool-call-record.js';

export interface InvokeInput<Paused> {
  registry: Pick<Registry, 'tool'>;
  /** The name the caller used (it may name no tool). */
  name: string;
  args: unknown;
  principal: Principal;
  /**
   * Runs the call in the front end's CallContext: the value it answered, or (MCP's modern era)
   * the input-required result that pauses it. Protocol errors it throws are rethrown.
   */
  run(
    call: (ctx: CallContext) => Promise<ToolResult>,
  ): Promise<{ value: ToolResult } | { inputRequired: Paused }>;
  /** Where a bug is logged with the reference its outcome names. */
  log?: ReferenceLog;
  /**
   * What a tool threw that is a bug (no expected failure): `reference`, an `internal` outcome
   * logged to `log` with `bugMessage`; `throw` (the default), rethrown for the edge to answer.
   */
  bugs?: 'reference' | 'throw';
  /** The log message of a thrown bug answered by reference. */
  bugMessage?: string;
  /**
   * The front end's own refusal of this call, checked after the gate and before the arguments
   * (the chat's: a tool blocked after repeated failures, a write that must be approved): a
   * tool error with that message, recorded like any other.
   */
  refuse?: () => AppError | null;
  /** Where the call is recorded (the exchange log and the audit); absent: not recorded. */
  record?: {
    sink: ToolCallSink;
    /** The configured database the call used, asked once the call has ended. */
    database?: () => string | null | undefined;
    /** The chat conversation the call was made in. */
    conversationId?: string | null;
  };
}

export type ToolOutcome<Paused> =
  /** Refused before anything ran: no such tool for this caller, or one its roles do not allow. */
  | { kind: 'refused'; reason: 'unknown' | 'denied'; spec?: ToolSpec }
  /** The tool's answer (which may itself be an isError result). */
  | { kind: 'ok'; result: ToolResult; spec: ToolSpec }
  | { kind: 'input-required'; inputRequired: Paused }
  /** The tool's own failure, or arguments it does not take: answered with the message. */
  | { kind: 'tool-error'; error: AppError; errorCode: string; spec: ToolSpec }
  /** A bug: answered only with the reference the log holds. */
  | { kind: 'internal'; message: string; ref: string; errorCode: string; spec: ToolSpec };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Why a successful answer does not match the tool's outputSchema (MCP: a tool that declares
 * one answers conforming structuredContent), or null when it does or was a failure.
 */
function outputIssues(
  check: ((value: unknown) => string[] | null) | null,
  result: ToolResult,
): string[] | null {
  if (check === null || result.isError === true) return null;
  if (result.structuredContent === undefined) return ['structuredContent is missing'];
  try {
    return check(result.structuredContent);
  } catch (error) {
    // An outputSchema that does not compile: no client can validate the answer either.
    return [(error as Error).message];
  }
}

/** What the record says of an outcome: whether it failed, and the code behind the failure. */
function recordedFailure(outcome: ToolOutcome<unknown>): {
  failed: boolean;
  errorCode: string | number | null;
} {
  switch (outcome.kind) {
    case 'refused':
      // The codes MCP answers these with (an unknown tool's invalid params, a caller it refuses).
      return {
        failed: true,
        errorCode: outcome.reason === 'unknown' ? RpcCodes.INVALID_PARAMS : RpcCodes.AUTH_REQUIRED,
      };
    case 'ok':
      return { failed: outcome.result.isError === true, errorCode: null };
    case 'input-required':
      return { failed: false, errorCode: null };
    case 'tool-error':
    case 'internal':
      return { failed: true, errorCode: outcome.errorCode };
  }
}

/** The code recorded for what escaped the step: a protocol error's number, else an internal error. */
function thrownCode(error: unknown): number {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : RpcCodes.INTERNAL_ERROR;
}

export async function invokeTool<Paused>(input: InvokeInput<Paused>): Promise<ToolOutcome<Paused>> {
  const { record } = input;
  if (!record) return invoke(input);
  const started = performance.now();
  const write = (failed: boolean, errorCode: string | number | null): void => {
    try {
      record.sink(
        toolCallRecord(input.registry, {
          principal: input.principal,
          tool: input.name,
          args: input.args,
          durationMs: performance.now() - started,
          failed,
          errorCode,
          database: record.database?.() ?? null,
          conversationId: record.conversationId ?? null,
          server: server(),
        }),
      );
    } catch (error) {
      // A failing sink (the audit's queue) never changes the caller's answer.
      logWithReference(
        input.log,
        {
          tool: input.name,
          err: { message: error instanceof Error ? error.message : String(error) },
        },
        'recording a tool call failed',
      );
    }
  };
  let outcome: ToolOutcome<Paused>;
  // The database server that answered the call (the primary or a read replica), for the audit.
  let server = (): string | null => null;
  try {
    const run = await noteServersOf(() => invoke(input));
    outcome = run.result;
    server = run.server;
  } catch (error) {
    write(true, thrownCode(error));
    throw error;
  }
  const { failed, errorCode } = recordedFailure(outcome);
  write(failed, errorCode);
  return outcome;
}

async function invoke<Paused>(input: InvokeInput<Paused>): Promise<ToolOutcome<Paused>> {
  const { name, principal } = input;
  const entry = input.registry.tool(name);
  if (!entry || !inScope(entry.spec, principal)) return { kind: 'refused', reason: 'unknown' };
  const spec = entry.spec;
  if (!canUse(spec, principal)) return { kind: 'refused', reason: 'denied', spec };

  const invalid = (why: string): ToolOutcome<Paused> => ({
    kind: 'tool-error',
    error: new AppError(ErrorCodes.TOOL_INPUT_INVALID, `Invalid arguments for ${name}: ${why}.`, {
      category: 'input',
    }),
    errorCode: ErrorCodes.TOOL_INPUT_INVALID,
    spec,
  });
  const refusal = input.refuse?.() ?? null;
  if (refusal)
    return { kind: 'tool-error', error: refusal, errorCode: toolErrorCode(refusal), spec };
  const args = input.args ?? {};
  if (!isObject(args)) return invalid('arguments must be an object');
  const inputIssues = entry.validate(args);
  if (inputIssues) return invalid(inputIssues.join('; '));

  let outcome: { value: ToolResult } | { inputRequired: Paused };
  try {
    outcome = await inSpan(
      `execute_tool ${spec.name}`,
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': spec.name },
      () => input.run((ctx) => spec.call(args, ctx)),
    );
  } catch (error) {
    if (isExpectedFailure(error)) {
      return { kind: 'tool-error', error, errorCode: toolErrorCode(error), spec };
    }
    if (input.bugs !== 'reference') throw error;
    const ref = logWithReference(
      input.log,
      { tool: name, err: { message: error instanceof Error ? error.message : String(error) } },
      input.bugMessage ?? 'tool failed',
    );
    return {
      kind: 'internal',
      message: `The tool ${name} failed with an internal error (ref ${ref}).`,
      ref,
      errorCode: ErrorCodes.INTERNAL,
      spec,
    };
  }
  if ('inputRequired' in outcome) {
    return { kind: 'input-required', inputRequired: outcome.inputRequired };
  }
  const outputIssuesFound = outputIssues(entry.checkOutput, outcome.value);
  if (!outputIssuesFound) return { kind: 'ok', result: outcome.value, spec };
  // A bug of the tool: the answer would make a validating client throw, so it is not sent;
  // the caller gets a tool error with the reference the log holds.
  const ref = logWithReference(
    input.log,
    { tool: name, issues: outputIssuesFound.slice(0, 5) },
    'tool answer does not match its outputSchema',
    newReference(),
  );
  return {
    kind: 'internal',
    message: `Internal error: the answer of ${name} does not match its outputSchema, so it was not sent (reference ${ref}). This is a bug; the server log has the details.`,
    ref,
    errorCode: ErrorCodes.INTERNAL,
    spec,
  };
}
