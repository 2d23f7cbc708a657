// Each call to a language model, counted: the provider (a configured name), the model (one the
// configuration names, else 'other': a caller may ask for any model id), the outcome, the
// latency and the tokens in and out. An AI SDK middleware, so the chat loop, the proxy and the
// compactor are counted alike without knowing of it.
import { wrapLanguageModel, type LanguageModel, type LanguageModelMiddleware } from 'ai';
import { NO_METRICS, type Metrics } from '../core/metrics.js';

type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>;
type Streamed = Awaited<ReturnType<Parameters<WrapStream>[0]['doStream']>>;
type StreamPart = Streamed['stream'] extends ReadableStream<infer P> ? P : never;

interface Usage {
  inputTokens: { total: number | undefined };
  outputTokens: { total: number | undefined };
}

export function countedModel(
  model: LanguageModel,
  labels: { provider: string; model: string },
  metrics: Metrics,
): LanguageModel {
  if (metrics === NO_METRICS) return model;
  // Models of the specification versions the wrapper takes (the AI SDK's providers of each
  // major make one or the other; it lifts a v3 model to v4).
  if (typeof model !== 'object' || !['v3', 'v4'].includes(model.specificationVersion)) return model;
  const report = (started: number, outcome: 'ok' | 'error', usage?: Usage): void =>
    metrics.llmRequest({
      ...labels,
      outcome,
      seconds: (performance.now() - started) / 1000,
      inputTokens: usage?.inputTokens.total ?? 0,
      outputTokens: usage?.outputTokens.total ?? 0,
    });
  const middleware: LanguageModelMiddleware = {
    specificationVersion: 'v4',
    async wrapGenerate({ doGenerate }) {
      const started = performance.now();
      try {
        const result = await doGenerate();
        report(started, 'ok', result.usage);
        return result;
      } catch (error) {
        report(started, 'error');
        throw error;
      }
    },
    async wrapStream({ doStream }) {
      const started = performance.now();
      let result: Streamed;
      try {
        result = await doStream();
      } catch (error) {
        report(started, 'error');
        throw error;
      }
      let reported = false;
      const once = (outcome: 'ok' | 'error', usage?: Usage): void => {
        if (reported) return;
        reported = true;
        report(started, outcome, usage);
      };
      const watch = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type === 'finish') once('ok', part.usage);
          else if (part.type === 'error') once('error');
          controller.enqueue(part);
        },
        flush() {
          once('error');
        },
      });
      return { ...result, stream: result.stream.pipeThrough(watch) };
    },
  };
  return wrapLanguageModel({ model, middleware });
}
