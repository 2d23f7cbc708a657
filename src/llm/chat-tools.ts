// pgmcp's own tools as AI SDK tools for one chat request: the registry's entries this caller
// may use, called in-process with a chat CallContext (never over HTTP) through the same
// invocation step as an MCP tools/call (tools/invoke.ts: gating, argument and output checks,
// the outcome by the error table), their results in the MCP shape
// `{ isError, text, structuredContent? }`. A query_database write needs the person's approval
// (AI SDK tool approval); the model has no other way to make it run. A tool that fails the same
// way maxSameFailures times is not run again in the request. Every call the model makes is
// recorded like an MCP tools/call (tools/tool-call-record.ts): the exchange log and the audit.
import { jsonSchema, tool, type ToolSet } from 'ai';
import type { ToolResult } from '../core/content.js';
import { logWithReference, type ReferenceLog } from '../core/error-table.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { DatabaseChoice, ToolSpec } from '../core/specs.js';
import { canUse } from '../tools/gate.js';
import { invokeTool } from '../tools/invoke.js';
import type { Registry } from '../tools/registry.js';
import { checkStatement } from '../tools/sql-guard.js';
import { toolCallRecord, toolErrorCode, type ToolCallSink } from '../tools/tool-call-record.js';
import { chatContext } from './chat-context.js';

/** What the client sees of one tool call (the contract's tool part output). */
export interface ChatToolOutput {
  isError: boolean;
  text: string;
  structuredContent?: Record<string, unknown>;
}

export interface ChatToolsInput {
  registry: Registry;
  principal: Principal;
  /** Aborted when the client goes away: the running tool's query is cancelled with it. */
  signal: AbortSignal;
  database?: DatabaseChoice;
  /** Tool call ids the person approved in the client. */
  approvedCalls: ReadonlySet<string>;
  /** Whether a database (by its `database` argument, or the chat's) accepts writes at all. */
  writable(database: string | undefined): boolean;
  maxSameFailures: number;
  maxToolResultChars: number;
  /** Where a bug inside a tool is logged, with the reference the output names. */
  logger?: ReferenceLog;
  /** Where each call is recorded once it has ended (the exchange log and the audit). */
  onToolCall?: ToolCallSink;
  /** The stored conversation the calls are made in (null: none is kept). */
  conversationId?: string | null;
}

/** One call's output, and the code behind its failure for the record. */
interface Ran {
  output: ChatToolOutput;
  errorCode?: string | number;
  /** The configured database the call used (several databases). */
  database?: string;
}

export interface ChatTools {
  tools: ToolSet;
  /** Names (as the model knows them) of the tools still offered. */
  active(): string[];
}

const QUERY_TOOL = 'query_database';
/** What the server log says of a bug inside a chat tool call. */
const BUG_MESSAGE = 'chat tool failed';
/** What an MCP tools/call of a name that is no tool records: JSON-RPC's invalid params. */
const UNKNOWN_TOOL_CODE = -32602;
// The routed query_database's "… at postgres://…" suffix naming its database: judged without it.
const AT_URL = /\s+at\s+postgres(?:ql)?:\/\/\S+?\s*;?\s*$/i;

/** Whether `query` writes, by the same parser that judges it when it runs. */
export function statementWrites(query: unknown): boolean {
  if (typeof query !== 'string') return false;
  try {
    return (
      checkStatement(query.replace(AT_URL, ''), { allowWrites: true, deniedFunctions: [] }).kind ===
      'write'
    );
  } catch {
    return false; // refused when it runs, with the parser's reason
  }
}

/** Names providers accept: 1-64 of letters, digits, _ and -. */
function modelNameOf(name: string, taken: Set<string>): string {
  let base = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
  for (let n = 2; taken.has(base); n++) base = `${base.slice(0, 60)}_${n}`;
  taken.add(base);
  return base;
}

/** The schema the model sees: query_database without `confirm` (no nonce path in the chat). */
function modelSchema(spec: ToolSpec): Record<string, unknown> {
  if (spec.name !== QUERY_TOOL) return spec.inputSchema;
  const properties = { ...((spec.inputSchema['properties'] as Record<string, unknown>) ?? {}) };
  delete properties['confirm'];
  return { ...spec.inputSchema, properties };
}

const usable = (spec: ToolSpec, principal: Principal): boolean =>
  canUse(spec, principal) &&
  // A tool whose arguments carry a secret (authenticate_user) has no place in a model's hands.
  spec.sensitiveArguments !== true;

function outputOf(result: ToolResult): ChatToolOutput {
  const text = result.content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .filter((t) => t !== '')
    .join('\n');
  return {
    isError: result.isError === true,
    text,
    ...(result.structuredContent !== undefined
      ? { structuredContent: result.structuredContent }
      : {}),
  };
}

const failed = (error: AppError): Ran => ({
  output: { isError: true, text: error.message },
  errorCode: toolErrorCode(error),
});

export function createChatTools(input: ChatToolsInput): ChatTools {
  const tools: ToolSet = {};
  const taken = new Set<string>();
  const failures = new Map<string, number>();
  const blocked = new Set<string>();
  const names: string[] = [];

  for (const spec of input.registry.tools()) {
    if (!usable(spec, input.principal)) continue;
    const registryName = spec.name;
    const name = modelNameOf(registryName, taken);
    names.push(name);
    // Input, output and the tool's own context (none: what a call needs comes from this closure).
    tools[name] = tool<Record<string, unknown>, ChatToolOutput, Record<string, never>>({
      description: spec.description,
      inputSchema: jsonSchema<Record<string, unknown>>(modelSchema(spec)),
      ...(registryName === QUERY_TOOL
        ? {
            needsApproval: (args: Record<string, unknown>) =>
              statementWrites(args['query']) &&
              input.writable(typeof args['database'] === 'string' ? args['database'] : undefined),
          }
        : {}),
      async execute(args, { toolCallId, abortSignal }) {
        const started = performance.now();
        const wasBlocked = blocked.has(name);
        const ran = wasBlocked
          ? failed(
              new AppError(
                ErrorCodes.TOOL_REPEATED_FAILURE,
                `Not run: ${registryName} failed the same way ${input.maxSameFailures} times in this request. Do not call it again; tell the person what went wrong.`,
                { category: 'input' },
              ),
            )
          : await run(spec, args ?? {}, toolCallId, abortSignal);
        record(registryName, args ?? {}, ran, performance.now() - started);
        const { output } = ran;
        if (output.isError && !wasBlocked) {
          const key = `${name}\u0000${output.text}`;
          const count = (failures.get(key) ?? 0) + 1;
          failures.set(key, count);
          if (count >= input.maxSameFailures) blocked.add(name);
        }
        return output;
      },
      toModelOutput: ({ output }) => {
        const text =
          output.text.length > input.maxToolResultChars
            ? `${output.text.slice(0, input.maxToolResultChars)}\n[… ${output.text.length - input.maxToolResultChars} more characters not shown]`
            : output.text;
        return output.isError ? { type: 'error-text', value: text } : { type: 'text', value: text };
      },
    });
  }

  /** The call as the MCP path records its own: the exchange log, the audit. Never throws. */
  function record(tool: string, args: unknown, ran: Ran, durationMs: number): void {
    if (!input.onToolCall) return;
    try {
      input.onToolCall(
        toolCallRecord(input.registry, {
          principal: input.principal,
          tool,
          args,
          durationMs,
          failed: ran.output.isError,
          errorCode: ran.errorCode ?? null,
          database: ran.database ?? null,
          conversationId: input.conversationId ?? null,
        }),
      );
    } catch (error) {
      logWithReference(
        input.logger,
        { tool, err: { message: error instanceof Error ? error.message : String(error) } },
        BUG_MESSAGE,
        'record',
      );
    }
  }

  async function run(
    spec: ToolSpec,
    args: Record<string, unknown>,
    toolCallId: string,
    abortSignal: AbortSignal | undefined,
  ): Promise<Ran> {
    if (spec.name === QUERY_TOOL && 'confirm' in args) {
      return failed(
        new AppError(
          ErrorCodes.WRITE_NEEDS_APPROVAL,
          'Not run: in the chat a write runs only when the person approves it; call query_database without confirm.',
          { category: 'input' },
        ),
      );
    }
    const signal = abortSignal ? AbortSignal.any([input.signal, abortSignal]) : input.signal;
    const ran: Partial<Ran> = {};
    const outcome = await invokeTool<never>({
      registry: input.registry,
      name: spec.name,
      args,
      principal: input.principal,
      run: async (call) => ({
        value: await call(
          chatContext({
            principal: input.principal,
            signal,
            ...(input.database ? { database: usedBy(input.database, ran) } : {}),
            approved: input.approvedCalls.has(toolCallId),
          }),
        ),
      }),
      log: input.logger,
      bugs: 'reference',
      bugMessage: BUG_MESSAGE,
    });
    // The chat's wire form of the outcome, recorded with the codes an MCP tools/call records.
    switch (outcome.kind) {
      case 'ok':
        return { ...ran, output: outputOf(outcome.result) };
      case 'tool-error':
        return {
          ...ran,
          output: { isError: true, text: outcome.error.message },
          errorCode: outcome.errorCode,
        };
      case 'internal':
        return {
          ...ran,
          output: { isError: true, text: outcome.message },
          errorCode: outcome.errorCode,
        };
      case 'refused':
      case 'input-required':
        return {
          output: { isError: true, text: `The tool ${spec.name} is no longer available.` },
          errorCode: UNKNOWN_TOOL_CODE,
        };
    }
  }

  return { tools, active: () => names.filter((n) => !blocked.has(n)) };
}

/** The chat's database choice for one call, noting in `ran` the database the call used. */
function usedBy(choice: DatabaseChoice, ran: Partial<Ran>): DatabaseChoice {
  return {
    get selected() {
      return choice.selected;
    },
    select: (name) => choice.select(name),
    used(name) {
      ran.database = name;
      choice.used(name);
    },
  };
}
