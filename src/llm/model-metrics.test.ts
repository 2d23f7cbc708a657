import { generateText, streamText } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { NO_METRICS, type Metrics } from '../core/metrics.js';
import { countedModel } from './model-metrics.js';

const usage = {
  inputTokens: { total: 7, noCache: 7, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 3, text: 3, reasoning: 0 },
};

function recorder(): { metrics: Metrics; calls: Parameters<Metrics['llmRequest']>[0][] } {
  const calls: Parameters<Metrics['llmRequest']>[0][] = [];
  return { metrics: { ...NO_METRICS, llmRequest: (event) => calls.push(event) }, calls };
}

describe('language model calls, counted', () => {
  it('counts a generation with its tokens', async () => {
    const { metrics, calls } = recorder();
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'hi' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      }),
    });
    const counted = countedModel(model, { provider: 'local', model: 'm1' }, metrics);
    await generateText({ model: counted, prompt: 'hello' });
    expect(calls).toEqual([
      expect.objectContaining({
        provider: 'local',
        model: 'm1',
        outcome: 'ok',
        inputTokens: 7,
        outputTokens: 3,
      }),
    ]);
  });

  it('counts a stream once it finishes, and a failed stream as an error', async () => {
    const { metrics, calls } = recorder();
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start', id: '1' },
            { type: 'text-delta', id: '1', delta: 'hi' },
            { type: 'text-end', id: '1' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
          ],
        }),
      }),
    });
    const counted = countedModel(model, { provider: 'local', model: 'other' }, metrics);
    const result = streamText({ model: counted, prompt: 'hello' });
    await result.consumeStream();
    expect(calls).toEqual([
      expect.objectContaining({ outcome: 'ok', model: 'other', inputTokens: 7, outputTokens: 3 }),
    ]);
    const failing = new MockLanguageModelV3({
      doStream: async () => {
        throw new Error('provider down');
      },
    });
    const broken = streamText({
      model: countedModel(failing, { provider: 'local', model: 'm1' }, metrics),
      prompt: 'hello',
      onError: () => undefined,
    });
    await broken.consumeStream();
    expect(calls.at(-1)).toEqual(expect.objectContaining({ outcome: 'error', inputTokens: 0 }));
  });
});
