// The invocation step records every call it is given a sink for, whatever became of it, with the
// codes both front ends answer: MCP's tools/call and the chat agent share this record.
import { describe, expect, it, vi } from 'vitest';
import type { ToolResult } from '../core/content.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import type { CallContext } from '../core/specs.js';
import { createFakeContext } from '../testing/fake-context.js';
import type { ExchangeRecord } from './handlers/exchange-log.js';
import { invokeTool, type InvokeInput } from './invoke.js';
import { roleGate } from './gate.js';
import { createRegistry } from './registry.js';

const schema = { type: 'object', properties: { n: { type: 'integer' } } };
const text = (t: string): ToolResult => ({ content: [{ type: 'text', text: t }] });
const ADMIN: Principal = { ...ANONYMOUS, kind: 'token', userId: 'ops', roles: ['admin'] };

function setup() {
  const registry = createRegistry();
  const ran = vi.fn(async (): Promise<ToolResult> => text('ok'));
  registry.addTool({ name: 'plain', description: 'p', inputSchema: schema, call: ran });
  registry.addTool({
    name: 'admin_only',
    description: 'a',
    inputSchema: schema,
    ...roleGate(['admin']),
    call: ran,
  });
  registry.addTool({
    name: 'fails',
    description: 'f',
    inputSchema: schema,
    call: async () => {
      throw new AppError(ErrorCodes.DB_QUERY_FAILED, 'relation "nope" does not exist', {
        category: 'input',
        details: { sqlstate: '42P01' },
      });
    },
  });
  registry.addTool({
    name: 'protocol',
    description: 'x',
    inputSchema: schema,
    call: async () => {
      throw Object.assign(new Error('Authentication required'), { code: -32001 });
    },
  });
  registry.addTool({
    name: 'secret',
    description: 's',
    inputSchema: schema,
    sensitiveArguments: true,
    call: ran,
  });
  const records: ExchangeRecord[] = [];
  const call = (
    name: string,
    args: unknown,
    extra: Partial<InvokeInput<never>> = {},
    principal: Principal = ANONYMOUS,
  ) =>
    invokeTool<never>({
      registry,
      name,
      args,
      principal,
      run: async (c: (ctx: CallContext) => Promise<ToolResult>) => ({
        value: await c(createFakeContext().ctx),
      }),
      record: { sink: (r) => records.push(r) },
      ...extra,
    });
  return { registry, ran, records, call };
}

describe('invokeTool records the call', () => {
  it('a success: the caller, the tool, its arguments, ok', async () => {
    const { records, call } = setup();
    expect((await call('plain', { n: 1 })).kind).toBe('ok');
    expect(records).toEqual([
      expect.objectContaining({
        principal: ANONYMOUS,
        method: 'tools/call',
        name: 'plain',
        args: { n: 1 },
        outcome: 'ok',
        errorCode: null,
      }),
    ]);
    expect(records[0]!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('refusals with the codes MCP answers them with, an unknown name without its arguments', async () => {
    const { records, call, ran } = setup();
    expect(await call('nope', { password: 'hunter22' })).toEqual({
      kind: 'refused',
      reason: 'unknown',
    });
    expect((await call('admin_only', { n: 1 })).kind).toBe('refused');
    expect((await call('admin_only', { n: 1 }, {}, ADMIN)).kind).toBe('ok');
    expect(records.map((r) => [r.name, r.outcome, r.errorCode])).toEqual([
      ['nope', 'error', -32602],
      ['admin_only', 'error', -32001],
      ['admin_only', 'ok', null],
    ]);
    expect(records[0]).not.toHaveProperty('args');
    expect(ran).toHaveBeenCalledTimes(1);
  });

  it("a tool's failure with its SQLSTATE, bad arguments with the input code", async () => {
    const { records, call } = setup();
    expect((await call('fails', {})).kind).toBe('tool-error');
    expect((await call('plain', { n: 'x' })).kind).toBe('tool-error');
    expect(records.map((r) => [r.outcome, r.errorCode])).toEqual([
      ['error', '42P01'],
      ['error', ErrorCodes.TOOL_INPUT_INVALID],
    ]);
  });

  it("the front end's own refusal: recorded as a tool error, the tool never runs", async () => {
    const { records, call, ran } = setup();
    const refusal = new AppError(ErrorCodes.TOOL_REPEATED_FAILURE, 'Not run: blocked.', {
      category: 'input',
    });
    const outcome = await call('plain', { n: 1 }, { refuse: () => refusal });
    expect(outcome).toMatchObject({ kind: 'tool-error', error: refusal });
    expect(ran).not.toHaveBeenCalled();
    expect(records.map((r) => [r.outcome, r.errorCode])).toEqual([
      ['error', ErrorCodes.TOOL_REPEATED_FAILURE],
    ]);
  });

  it('what escapes the step is recorded with its protocol code, or as internal, and rethrown', async () => {
    const { records, call } = setup();
    await expect(call('protocol', {})).rejects.toThrow('Authentication required');
    const bug = { run: async () => Promise.reject(new TypeError('undefined is not a function')) };
    await expect(call('plain', {}, bug)).rejects.toThrow(TypeError);
    expect(records.map((r) => [r.outcome, r.errorCode])).toEqual([
      ['error', -32001],
      ['error', -32603],
    ]);
  });

  it('a bug answered by reference is recorded with the internal code', async () => {
    const { records, call } = setup();
    const log = { error: vi.fn() };
    const bug = {
      run: async () => Promise.reject(new TypeError('oops')),
      bugs: 'reference' as const,
      log,
    };
    expect((await call('plain', {}, bug)).kind).toBe('internal');
    expect(records.map((r) => [r.outcome, r.errorCode])).toEqual([['error', ErrorCodes.INTERNAL]]);
  });

  it('keeps no secret argument, names the database used and the conversation', async () => {
    const { records, call } = setup();
    let used: string | undefined;
    await call(
      'secret',
      { n: 1 },
      {
        run: async (c) => {
          used = 'sales';
          return { value: await c(createFakeContext().ctx) };
        },
        record: {
          sink: (r) => records.push(r),
          database: () => used,
          conversationId: 'c-1',
        },
      },
    );
    expect(records).toEqual([
      expect.objectContaining({ name: 'secret', database: 'sales', conversationId: 'c-1' }),
    ]);
    expect(records[0]).not.toHaveProperty('args');
  });

  it('a sink that throws changes nothing of the answer, and is logged', async () => {
    const { call } = setup();
    const log = { error: vi.fn() };
    const outcome = await call(
      'plain',
      { n: 1 },
      {
        log,
        record: {
          sink: () => {
            throw new Error('audit queue full');
          },
        },
      },
    );
    expect(outcome.kind).toBe('ok');
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining({ tool: 'plain' }),
      'recording a tool call failed',
    );
  });

  it('records nothing without a sink', async () => {
    const { call, records } = setup();
    const outcome = await call('plain', { n: 1 }, { record: undefined });
    expect(outcome.kind).toBe('ok');
    expect(records).toEqual([]);
  });
});
