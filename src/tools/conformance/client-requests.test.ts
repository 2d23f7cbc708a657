import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { InputRequiredSignal, createFakeContext } from '../../testing/fake-context.js';
import {
  elicitation,
  elicitationDefaults,
  elicitationEnums,
  missingCapability,
  sampling,
  streamingElicitation,
} from './client-requests.js';

const sampled = (text: string) => ({
  role: 'assistant',
  content: { type: 'text', text },
  model: 'test-model',
  stopReason: 'endTurn',
});

describe('test_sampling', () => {
  it('sends the prompt as one user message with maxTokens 100 and reports the reply', async () => {
    const fake = createFakeContext({
      answers: { reply: sampled('This is a test response from the client') },
    });
    const result = await sampling.call({ prompt: 'Test prompt for sampling' }, fake.ctx);
    expect(fake.inputRequests).toEqual([
      {
        reply: {
          method: 'sampling/createMessage',
          params: {
            messages: [
              { role: 'user', content: { type: 'text', text: 'Test prompt for sampling' } },
            ],
            maxTokens: 100,
          },
        },
      },
    ]);
    expect(result).toEqual({
      content: [{ type: 'text', text: 'LLM response: This is a test response from the client' }],
    });
  });

  it('reads a sampling reply whose content is a list of blocks', async () => {
    const { ctx } = createFakeContext({
      answers: {
        reply: {
          role: 'assistant',
          model: 'm',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      },
    });
    expect(await sampling.call({ prompt: 'p' }, ctx)).toEqual({
      content: [{ type: 'text', text: 'LLM response: a\nb' }],
    });
  });

  it('fails when the client has no sampling capability', async () => {
    const { ctx } = createFakeContext({ capabilities: ['elicitation'] });
    await expect(sampling.call({ prompt: 'p' }, ctx)).rejects.toMatchObject({
      code: ErrorCodes.CAPABILITY_MISSING,
    });
  });
});

describe('test_elicitation', () => {
  it('asks for username and email, both required, with the given message', async () => {
    const fake = createFakeContext({
      answers: {
        user: { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } },
      },
    });
    const result = await elicitation.call({ message: 'Please provide your information' }, fake.ctx);
    const request = fake.inputRequests[0]!.user!;
    expect(request.method).toBe('elicitation/create');
    expect(request.params).toMatchObject({
      message: 'Please provide your information',
      requestedSchema: {
        type: 'object',
        properties: { username: { type: 'string' }, email: { type: 'string' } },
        required: ['username', 'email'],
      },
    });
    expect(result).toEqual({
      content: [
        {
          type: 'text',
          text: 'User response: action=accept, content={"username":"testuser","email":"test@example.com"}',
        },
      ],
    });
  });

  it('reports a declined request', async () => {
    const { ctx } = createFakeContext({ answers: { user: { action: 'decline' } } });
    expect(await elicitation.call({ message: 'm' }, ctx)).toEqual({
      content: [{ type: 'text', text: 'User response: action=decline, content={}' }],
    });
  });
});

describe('test_elicitation_sep1034_defaults', () => {
  it('gives every primitive field its expected default', async () => {
    const answer = {
      action: 'accept',
      content: { name: 'Jane Smith', age: 25, score: 88, status: 'inactive', verified: false },
    };
    const fake = createFakeContext({ answers: { profile: answer } });
    const result = await elicitationDefaults.call({}, fake.ctx);
    const schema = fake.inputRequests[0]!.profile!.params.requestedSchema as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(schema.properties.name).toMatchObject({ type: 'string', default: 'John Doe' });
    expect(schema.properties.age).toMatchObject({ type: 'integer', default: 30 });
    expect(schema.properties.score).toMatchObject({ type: 'number', default: 95.5 });
    expect(schema.properties.status).toMatchObject({
      type: 'string',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    });
    expect(schema.properties.verified).toMatchObject({ type: 'boolean', default: true });
    expect(result.content[0]).toEqual({
      type: 'text',
      text: `Elicitation completed: action=accept, content=${JSON.stringify(answer.content)}`,
    });
  });
});

describe('test_elicitation_sep1330_enums', () => {
  it('uses each of the five enum forms exactly as SEP-1330 defines them', async () => {
    const content = {
      untitledSingle: 'option1',
      titledSingle: 'value1',
      legacyEnum: 'opt1',
      untitledMulti: ['option1', 'option2'],
      titledMulti: ['value1', 'value2'],
    };
    const fake = createFakeContext({ answers: { choices: { action: 'accept', content } } });
    const result = await elicitationEnums.call({}, fake.ctx);
    const p = (
      fake.inputRequests[0]!.choices!.params.requestedSchema as { properties: Record<string, any> }
    ).properties;

    expect(p.untitledSingle).toEqual({ type: 'string', enum: ['option1', 'option2', 'option3'] });

    expect(p.titledSingle.type).toBe('string');
    expect(p.titledSingle.enum).toBeUndefined();
    expect(p.titledSingle.oneOf.map((o: any) => o.const)).toContain('value1');
    for (const o of p.titledSingle.oneOf)
      expect([typeof o.const, typeof o.title]).toEqual(['string', 'string']);

    expect(p.legacyEnum.enumNames).toHaveLength(p.legacyEnum.enum.length);

    expect(p.untitledMulti).toEqual({
      type: 'array',
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    });

    expect(p.titledMulti.type).toBe('array');
    expect(p.titledMulti.items.enum).toBeUndefined();
    expect(p.titledMulti.items.anyOf.map((o: any) => o.const)).toEqual(
      expect.arrayContaining(['value1', 'value2']),
    );
    for (const o of p.titledMulti.items.anyOf)
      expect([typeof o.const, typeof o.title]).toEqual(['string', 'string']);

    expect(result.content[0]).toEqual({
      type: 'text',
      text: `Elicitation completed: action=accept, content=${JSON.stringify(content)}`,
    });
  });
});

describe('server-stateless probes', () => {
  it('test_missing_capability rejects with CAPABILITY_MISSING naming sampling', async () => {
    const { ctx } = createFakeContext({ capabilities: [] });
    const error = await missingCapability.call({}, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: ErrorCodes.CAPABILITY_MISSING,
      details: { requiredCapabilities: { sampling: {} } },
    });
  });

  it('test_missing_capability completes when sampling is declared', async () => {
    const { ctx } = createFakeContext({
      capabilities: ['sampling'],
      answers: { summary: sampled('ok') },
    });
    expect(await missingCapability.call({}, ctx)).toEqual({
      content: [{ type: 'text', text: 'Sampled: ok' }],
    });
  });

  it('test_streaming_elicitation asks through requestInput, then completes', async () => {
    const first = createFakeContext({ capabilities: ['elicitation'] });
    const signal = await streamingElicitation.call({}, first.ctx).catch((e: unknown) => e);
    expect(signal).toBeInstanceOf(InputRequiredSignal);
    expect(Object.values((signal as InputRequiredSignal).requests).map((r) => r.method)).toEqual([
      'elicitation/create',
    ]);

    const second = createFakeContext({
      answers: { confirmation: { action: 'accept', content: { proceed: true } } },
    });
    const result = await streamingElicitation.call({}, second.ctx);
    expect(result.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('action=accept'),
    });
  });
});
