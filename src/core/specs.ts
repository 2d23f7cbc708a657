// What a tool, resource, resource template or prompt is, independent of any transport.
// tools/ builds these; mcp/ and api/ serve them.
import type { PromptResult, ResourceReadResult, ToolResult } from './content.js';
import type { JsonSchema } from './json-schema.js';
import type { Principal } from './principal.js';

export type LogLevel =
  'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

export const LOG_LEVELS: readonly LogLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** Something the server needs from the client before it can finish a call. */
export interface InputRequest {
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  params: Record<string, unknown>;
}

/** The capability a client must declare for each kind of input request. */
export const INPUT_CAPABILITY: Record<InputRequest['method'], string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/**
 * The caller's choice among several configured databases, kept by the protocol layer for the
 * session (an MCP session, else the caller's token or user). Tools only read and set a name.
 */
export interface DatabaseChoice {
  /** The database this session selected; null when it selected none. */
  readonly selected: string | null;
  /** Make `name` the session's database from now on (the tool has checked access). */
  select(name: string): void;
  /** Note the database this call used (the exchange log and the audit name it). */
  used(name: string): void;
}

/**
 * Everything a handler may use while it runs. The protocol layer provides it; handlers
 * never see sessions, eras or transports.
 */
export interface CallContext {
  readonly principal: Principal;
  /** Present when several databases are configured: the session's choice among them. */
  readonly database?: DatabaseChoice;
  /** Aborted when the client cancels the request or goes away (where that means cancel). */
  readonly signal: AbortSignal;
  /** Report progress; does nothing when the client asked for none. Values must increase. */
  progress(progress: number, total?: number, message?: string): void;
  /** Send a log message to the client, if its level is enabled for this request. */
  log(level: LogLevel, data: unknown, logger?: string): void;
  /** Whether the client declared this capability (e.g. 'elicitation', 'sampling', 'roots'). */
  clientSupports(capability: string): boolean;
  /**
   * Ask the client for input (elicitation, sampling, roots). Resolves with one result per key.
   * Legacy era: server→client requests on the request's stream. Modern era: the call
   * is answered with an input-required result and re-run when the client comes back with
   * the answers; handlers must therefore do nothing irreversible before asking.
   * Rejects with CAPABILITY_MISSING if the client did not declare what a request needs.
   */
  requestInput<K extends string>(requests: Record<K, InputRequest>): Promise<Record<K, unknown>>;
  /**
   * Report how long one stage of the call took (query_database: parse, policy, plan,
   * confirm, run, format), for a Server-Timing header and the debug log. Optional.
   */
  timing?(stage: string, durationMs: number): void;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolSpec {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  /** Labels (registry `tags`, routine `@tags`): sent as `_meta.tags`; tools/list filters on them. */
  tags?: readonly string[];
  /**
   * Whether this caller may use it. Absent: everyone. A caller who may not is refused on use
   * (401-style when anonymous, 403-style when signed in) and, with auth.filterToolsByRole,
   * also left out of lists (which are then per-caller: modern-era cacheScope 'private').
   */
  allows?(principal: Principal): boolean;
  /**
   * The roles behind allows, when it is "one of these roles": a refused caller is told which
   * (as the OAuth scope to ask for in a 403 insufficient_scope challenge).
   */
  requiredRoles?: readonly string[];
  /**
   * Whether this caller can know of it at all (an entry of databases it may not use). Absent:
   * everyone. Unlike allows, always applied: left out of every list, unknown on use.
   */
  inScope?(principal: Principal): boolean;
  /**
   * The arguments carry a secret (a password): whatever records calls (the exchange log) must
   * keep the call but never its arguments, whatever its settings say.
   */
  sensitiveArguments?: boolean;
  /**
   * Whether a call may run as a task (MCP `execution.taskSupport`): 'optional' lets a client
   * that asks for one (or declares the tasks extension) get a task handle at once; 'required'
   * runs only as a task. Absent: never a task.
   */
  taskSupport?: 'optional' | 'required';
  /**
   * 2026-07-28, a task-supporting tool: its first questions (ctx.requestInput) are asked on
   * tools/call itself, as input_required rounds, and the task is created once they are
   * answered; the task's run gets those answers. The tool must ask before it does anything.
   */
  inputBeforeTask?: boolean;
  /** Arguments have been validated against inputSchema (omitted arguments arrive as {}). */
  call(args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult>;
}

export interface ResourceSpec {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /**
   * Whether this caller may use it. Absent: everyone. A caller who may not is refused on use
   * (401-style when anonymous, 403-style when signed in) and, with auth.filterToolsByRole,
   * also left out of lists (which are then per-caller: modern-era cacheScope 'private').
   */
  allows?(principal: Principal): boolean;
  /**
   * Whether this caller can know of it at all (an entry of databases it may not use). Absent:
   * everyone. Unlike allows, always applied: left out of every list, unknown on use.
   */
  inScope?(principal: Principal): boolean;
  read(ctx: CallContext): Promise<ResourceReadResult>;
}

export interface CompletionResult {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

export interface ResourceTemplateSpec {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /**
   * Whether this caller may use it. Absent: everyone. A caller who may not is refused on use
   * (401-style when anonymous, 403-style when signed in) and, with auth.filterToolsByRole,
   * also left out of lists (which are then per-caller: modern-era cacheScope 'private').
   */
  allows?(principal: Principal): boolean;
  /**
   * Whether this caller can know of it at all (an entry of databases it may not use). Absent:
   * everyone. Unlike allows, always applied: left out of every list, unknown on use.
   */
  inScope?(principal: Principal): boolean;
  /** Returns the template variables if the URI belongs to this template, else null. */
  match(uri: string): Record<string, string> | null;
  read(uri: string, vars: Record<string, string>, ctx: CallContext): Promise<ResourceReadResult>;
  complete?(
    argument: string,
    value: string,
    context: Record<string, string>,
  ): Promise<CompletionResult>;
}

export interface PromptArgumentSpec {
  name: string;
  description?: string;
  required?: boolean;
}

export interface PromptSpec {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgumentSpec[];
  /**
   * Whether this caller may use it. Absent: everyone. A caller who may not is refused on use
   * (401-style when anonymous, 403-style when signed in) and, with auth.filterToolsByRole,
   * also left out of lists (which are then per-caller: modern-era cacheScope 'private').
   */
  allows?(principal: Principal): boolean;
  /**
   * Whether this caller can know of it at all (an entry of databases it may not use). Absent:
   * everyone. Unlike allows, always applied: left out of every list, unknown on use.
   */
  inScope?(principal: Principal): boolean;
  get(args: Record<string, string>, ctx: CallContext): Promise<PromptResult>;
  complete?(
    argument: string,
    value: string,
    context: Record<string, string>,
  ): Promise<CompletionResult>;
}
