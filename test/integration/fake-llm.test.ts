// The fake LLM speaks each provider's wire format well enough for the provider's own library:
// a tool call, its result sent back, then text — generated and streamed.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogle } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, isStepCount, streamText, tool, type LanguageModel } from 'ai';
import { createOllama } from 'ollama-ai-provider-v2';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeFlavor, type FakeLlm } from '../helpers/fake-llm.js';

const KEY = 'fake-key';

const variants: { name: string; flavor: FakeFlavor; model(baseUrl: string): LanguageModel }[] = [
  {
    name: 'openai chat completions',
    flavor: 'openai',
    model: (baseURL) => createOpenAI({ apiKey: KEY, baseURL }).chat('gpt-fake-1'),
  },
  {
    name: 'openai responses',
    flavor: 'openai',
    model: (baseURL) => createOpenAI({ apiKey: KEY, baseURL }).responses('gpt-fake-1'),
  },
  {
    name: 'anthropic messages',
    flavor: 'anthropic',
    model: (baseURL) => createAnthropic({ apiKey: KEY, baseURL })('claude-fake-1'),
  },
  {
    name: 'gemini',
    flavor: 'google',
    model: (baseURL) => createGoogle({ apiKey: KEY, baseURL })('gemini-fake-1'),
  },
  {
    name: 'ollama',
    flavor: 'ollama',
    model: (baseURL) =>
      createOllama({ baseURL: `${baseURL}/api`, headers: { authorization: `Bearer ${KEY}` } })(
        'llama-fake:1b',
      ),
  },
];

const lookup = tool({
  description: 'Look a number up.',
  inputSchema: jsonSchema<{ name: string }>({
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name'],
  }),
  execute: async ({ name }) => `the number of ${name} is 42`,
});

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe.each(variants)('fake LLM: $name', ({ flavor, model }) => {
  const script = [
    { toolCalls: [{ name: 'lookup', args: { name: 'answers' } }] },
    { text: 'It is 42.', usage: { input: 7, output: 3 } },
  ];

  it('answers generateText with a tool call, then text', async () => {
    fake = await startFakeLlm({ flavor, script, apiKey: KEY });
    const result = await generateText({
      model: model(fake.baseUrl),
      instructions: 'Be brief.',
      prompt: 'What is the answer?',
      tools: { lookup },
      stopWhen: isStepCount(3),
    });
    expect(result.text).toBe('It is 42.');
    expect(result.steps[0]!.toolCalls[0]).toMatchObject({
      toolName: 'lookup',
      input: { name: 'answers' },
    });
    expect(result.steps[1]!.usage.inputTokens).toBe(7);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]).toMatchObject({
      stream: false,
      toolNames: ['lookup'],
      lastUserText: 'What is the answer?',
    });
    expect(fake.requests[0]!.system).toContain('Be brief.');
    expect(fake.requests[1]!.toolResults.join()).toContain('the number of answers is 42');
  });

  it('streams with streamText', async () => {
    fake = await startFakeLlm({ flavor, script, apiKey: KEY });
    const result = streamText({
      model: model(fake.baseUrl),
      prompt: 'What is the answer?',
      tools: { lookup },
      stopWhen: isStepCount(3),
    });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.join('')).toBe('It is 42.');
    expect(deltas.length).toBeGreaterThan(1);
    expect((await result.steps)[0]!.toolCalls[0]!.toolName).toBe('lookup');
    expect(fake.requests.every((r) => r.stream)).toBe(true);
  });
});

describe('fake LLM: refusals', () => {
  it('answers a wrong key with the provider 401', async () => {
    fake = await startFakeLlm({ flavor: 'openai', script: [{ text: 'no' }], apiKey: KEY });
    await expect(
      generateText({
        model: createOpenAI({ apiKey: 'wrong', baseURL: fake.baseUrl }).chat('gpt-fake-1'),
        prompt: 'hi',
        maxRetries: 0,
      }),
    ).rejects.toThrow(/invalid api key/);
  });
});
