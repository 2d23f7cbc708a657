import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/errors.js';
import type { InputRequest } from '../../core/specs.js';
import {
  InputRequiredSignal,
  createFakeContext,
  replayUntilComplete,
} from '../../testing/fake-context.js';
import {
  askElicitation,
  askInRounds,
  askMany,
  askRoots,
  askSampling,
  askToBeTampered,
  askWithState,
  askWithinCapabilities,
  inputRequiredPrompt,
} from './input-required.js';

// The answers the conformance harness gives, by request method.
function harnessAnswer(_key: string, request: InputRequest): unknown {
  if (request.method === 'sampling/createMessage') {
    return {
      role: 'assistant',
      content: { type: 'text', text: 'Hello there!' },
      model: 'test-model',
      stopReason: 'endTurn',
    };
  }
  if (request.method === 'roots/list')
    return { roots: [{ uri: 'file:///test/root', name: 'Test Root' }] };
  const schema = request.params.requestedSchema as { properties: Record<string, unknown> };
  const field = Object.keys(schema.properties)[0]!;
  return {
    action: 'accept',
    content: { [field]: field === 'ok' ? true : field === 'color' ? 'blue' : 'Alice' },
  };
}

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

describe('single-round input-required fixtures', () => {
  it('elicitation: user_name asks "What is your name?" for a required name', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askElicitation.call({}, ctx),
      harnessAnswer,
    );
    expect(rounds).toEqual([
      {
        user_name: {
          method: 'elicitation/create',
          params: {
            message: 'What is your name?',
            requestedSchema: {
              type: 'object',
              properties: { name: { type: 'string' } },
              required: ['name'],
            },
          },
        },
      },
    ]);
    expect(result).toEqual(text('Hello, Alice!'));
  });

  it('sampling: capital_question with maxTokens 100', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askSampling.call({}, ctx),
      harnessAnswer,
    );
    expect(rounds[0]).toEqual({
      capital_question: {
        method: 'sampling/createMessage',
        params: {
          messages: [
            { role: 'user', content: { type: 'text', text: 'What is the capital of France?' } },
          ],
          maxTokens: 100,
        },
      },
    });
    expect(result).toEqual(text('The model answered: Hello there!'));
  });

  it('roots: client_roots is roots/list with empty params; the result names the roots', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askRoots.call({}, ctx),
      harnessAnswer,
    );
    expect(rounds[0]).toEqual({ client_roots: { method: 'roots/list', params: {} } });
    expect(result).toEqual(text('The client shared 1 root: file:///test/root.'));
  });

  it('request state: says state-ok only when the state came back verified', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askWithState.call({}, ctx),
      harnessAnswer,
    );
    expect(rounds[0]!.confirm).toMatchObject({
      method: 'elicitation/create',
      params: {
        message: 'Please confirm',
        requestedSchema: { properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
    });
    expect(result).toEqual(
      text('Confirmation received (action=accept, content={"ok":true}); state-ok'),
    );

    const { ctx } = createFakeContext({
      answers: { confirm: { action: 'accept', content: { ok: true } } },
    });
    expect((await askWithState.call({}, ctx)).content[0]).toMatchObject({
      text: expect.stringContaining('state-not-echoed'),
    });
  });

  it('tampered state fixture asks one boolean question', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askToBeTampered.call({}, ctx),
      harnessAnswer,
    );
    expect(Object.keys(rounds[0]!)).toEqual(['approval']);
    expect(result).toEqual(text('Approval recorded: action=accept, content={"ok":true}'));
  });
});

describe('multiple inputs and rounds', () => {
  it('asks elicitation, sampling and roots together in one round', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askMany.call({}, ctx),
      harnessAnswer,
    );
    expect(rounds).toHaveLength(1);
    expect(Object.fromEntries(Object.entries(rounds[0]!).map(([k, r]) => [k, r.method]))).toEqual({
      user_name: 'elicitation/create',
      greeting: 'sampling/createMessage',
      client_roots: 'roots/list',
    });
    expect(rounds[0]!.greeting!.params).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
      maxTokens: 50,
    });
    expect(result).toEqual(
      text('Hello there! — for Alice. The client shared 1 root: file:///test/root.'),
    );
  });

  it('multi-round asks step1, then step2, then completes', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askInRounds.call({}, ctx),
      harnessAnswer,
    );
    expect(rounds.map((r) => Object.keys(r))).toEqual([['step1'], ['step2']]);
    expect(rounds[0]!.step1!.params.message).toBe('Step 1: What is your name?');
    expect(rounds[1]!.step2!.params).toMatchObject({
      message: 'Step 2: What is your favorite color?',
      requestedSchema: { properties: { color: { type: 'string' } }, required: ['color'] },
    });
    expect(result).toEqual(text('Alice likes blue.'));
  });

  it('asks again (does not fail) when only an unrelated key was answered', async () => {
    const { ctx } = createFakeContext({
      answers: { wrong_key: { action: 'accept', content: { data: 'wrong' } } },
    });
    await expect(askElicitation.call({}, ctx)).rejects.toBeInstanceOf(InputRequiredSignal);
  });

  it('ignores extra answer keys', async () => {
    const { ctx } = createFakeContext({
      answers: {
        user_name: { action: 'accept', content: { name: 'Alice' } },
        unknown_extra_key: { action: 'accept', content: { foo: 'bar' } },
      },
    });
    expect(await askElicitation.call({}, ctx)).toEqual(text('Hello, Alice!'));
  });

  it('refuses a malformed answer instead of completing', async () => {
    const { ctx } = createFakeContext({ answers: { user_name: 12345 } });
    await expect(askElicitation.call({}, ctx)).rejects.toMatchObject({
      code: ErrorCodes.PROTOCOL_INVALID_PARAMS,
    });
  });
});

describe('capability-aware asking', () => {
  it('asks only for sampling when only sampling is declared', async () => {
    const fake = createFakeContext({ capabilities: ['sampling'] });
    const signal = (await askWithinCapabilities
      .call({}, fake.ctx)
      .catch((e: unknown) => e)) as InputRequiredSignal;
    expect(signal).toBeInstanceOf(InputRequiredSignal);
    expect(Object.values(signal.requests).map((r) => r.method)).toEqual(['sampling/createMessage']);
  });

  it('asks for all three kinds when all are declared, then completes', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => askWithinCapabilities.call({}, ctx),
      harnessAnswer,
    );
    expect(
      Object.values(rounds[0]!)
        .map((r) => r.method)
        .sort(),
    ).toEqual(['elicitation/create', 'roots/list', 'sampling/createMessage']);
    expect(result.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('Asked for user_name, haiku, client_roots'),
    });
  });

  it('completes without asking when nothing is declared', async () => {
    const fake = createFakeContext({ capabilities: [] });
    const result = await askWithinCapabilities.call({}, fake.ctx);
    expect(fake.inputRequests).toEqual([]);
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining('Nothing to ask') });
  });
});

describe('test_input_required_result_prompt', () => {
  it('asks user_context, then returns a GetPromptResult using it', async () => {
    const { result, rounds } = await replayUntilComplete(
      (ctx) => inputRequiredPrompt.get({}, ctx),
      (_k, r) =>
        r.method === 'elicitation/create'
          ? { action: 'accept', content: { context: 'test context' } }
          : null,
    );
    expect(rounds[0]).toEqual({
      user_context: {
        method: 'elicitation/create',
        params: {
          message: 'What context should the prompt use?',
          requestedSchema: {
            type: 'object',
            properties: { context: { type: 'string' } },
            required: ['context'],
          },
        },
      },
    });
    expect(result.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Use this context: test context' } },
    ]);
  });
});
