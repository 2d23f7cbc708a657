// pgmcp's own tools as AI SDK tools for one chat request: the registry's entries this caller
// may use, called in-process with a chat CallContext (never over HTTP) through the same
// invocation step as an MCP tools/call (tools/invoke.ts: gating, argument and output checks,
// the outcome by the error table), their results in the MCP shape
// `{ isError, text, structuredContent? }`. A query_database write, and every
// apply_index_recommendation, needs the person's approval (AI SDK tool approval); the model has
// no other way to make it run. A tool that fails the same
// way maxSameFailures times is not run again in the request. Every call the model makes is
// recorded by that step, as an MCP tools/call is: the exchange log and the audit.
import { jsonSchema, tool, type ToolSet } from 'ai';
import type { ToolResult } from '../core/content.js';
import type { ReferenceLog } from '../core/error-table.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { DatabaseChoice, ToolSpec } from '../core/specs.js';
import { canUse } from '../tools/gate.js';
import { invokeTool } from '../tools/invoke.js';
import type { Registry } from '../tools/registry.js';
import { checkStatement } from '../tools/sql-guard.js';
import type { ToolCallSink } from '../tools/tool-call-record.js';
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

export interface ChatTools {
  tools: ToolSet;
  /** Names (as the model knows them) of the tools still offered. */
  active(): string[];
}

const QUERY_TOOL = 'query_database';
/** Creates an index: always a write, confirmed like query_database's. */
const APPLY_INDEX_TOOL = 'apply_index_recommendation';
/** The tools whose writes wait for the person's approval; their `confirm` nonce is not offered. */
const CONFIRMED_TOOLS = new Set([QUERY_TOOL, APPLY_INDEX_TOOL]);
/** What the server log says of a bug inside a chat tool call. */
const BUG_MESSAGE = 'chat tool failed';
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

/** The schema the model sees: the confirmed tools without `confirm` (no nonce path in the chat). */
function modelSchema(spec: ToolSpec): Record<string, unknown> {
  if (!CONFIRMED_TOOLS.has(spec.name)) return spec.inputSchema;
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
      ...(CONFIRMED_TOOLS.has(registryName)
        ? {
            needsApproval: (args: Record<string, unknown>) =>
              (registryName === APPLY_INDEX_TOOL || statementWrites(args['query'])) &&
              input.writable(typeof args['database'] === 'string' ? args['database'] : undefined),
          }
        : {}),
      async execute(args, { toolCallId, abortSignal }) {
        const wasBlocked = blocked.has(name);
        const output = await run(spec, args ?? {}, toolCallId, abortSignal, wasBlocked);
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

  /** The chat's own refusals of a call, before it runs (recorded like any tool error). */
  const refusalOf = (
    spec: ToolSpec,
    args: Record<string, unknown>,
    wasBlocked: boolean,
  ): AppError | null => {
    if (wasBlocked) {
      return new AppError(
        ErrorCodes.TOOL_REPEATED_FAILURE,
        `Not run: ${spec.name} failed the same way ${input.maxSameFailures} times in this request. Do not call it again; tell the person what went wrong.`,
        { category: 'input' },
      );
    }
    if (CONFIRMED_TOOLS.has(spec.name) && 'confirm' in args) {
      return new AppError(
        ErrorCodes.WRITE_NEEDS_APPROVAL,
        `Not run: in the chat a write runs only when the person approves it; call ${spec.name} without confirm.`,
        { category: 'input' },
      );
    }
    return null;
  };

  /** One call through the invocation step (which also records it), in the chat's wire form. */
  async function run(
    spec: ToolSpec,
    args: Record<string, unknown>,
    toolCallId: string,
    abortSignal: AbortSignal | undefined,
    wasBlocked: boolean,
  ): Promise<ChatToolOutput> {
    const signal = abortSignal ? AbortSignal.any([input.signal, abortSignal]) : input.signal;
    let usedDatabase: string | undefined;
    const outcome = await invokeTool<never>({
      registry: input.registry,
      name: spec.name,
      args,
      principal: input.principal,
      refuse: () => refusalOf(spec, args, wasBlocked),
      run: async (call) => ({
        value: await call(
          chatContext({
            principal: input.principal,
            signal,
            ...(input.database
              ? { database: usedBy(input.database, (name) => (usedDatabase = name)) }
              : {}),
            approved: input.approvedCalls.has(toolCallId),
          }),
        ),
      }),
      log: input.logger,
      bugs: 'reference',
      bugMessage: BUG_MESSAGE,
      ...(input.onToolCall
        ? {
            record: {
              sink: input.onToolCall,
              database: () => usedDatabase,
              conversationId: input.conversationId ?? null,
            },
          }
        : {}),
    });
    switch (outcome.kind) {
      case 'ok':
        return outputOf(outcome.result);
      case 'tool-error':
        return { isError: true, text: outcome.error.message };
      case 'internal':
        return { isError: true, text: outcome.message };
      case 'refused':
      case 'input-required':
        return { isError: true, text: `The tool ${spec.name} is no longer available.` };
    }
  }

  return { tools, active: () => names.filter((n) => !blocked.has(n)) };
}

/** The chat's database choice for one call, telling `note` the database the call used. */
function usedBy(choice: DatabaseChoice, note: (name: string) => void): DatabaseChoice {
  return {
    get selected() {
      return choice.selected;
    },
    select: (name) => choice.select(name),
    used(name) {
      note(name);
      choice.used(name);
    },
  };
}
