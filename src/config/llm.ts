// The `llm:` section: the model providers behind /api/llm/* and /api/chat, and the bounds of
// one chat request. Keys are never written here: a provider names the environment variable or
// the file that holds its key. Providers can also come from the conventional environment
// variables alone (OPENAI_API_KEY, ANTHROPIC_API_KEY, …; see llm/providers.ts).
import type { z } from 'zod';
import { optionalText, section, text, zod } from './zod.js';

export const LLM_PROVIDER_TYPES = [
  'openai',
  'openaiCompatible',
  'anthropic',
  'google',
  'ollama',
] as const;
export type LlmProviderType = (typeof LLM_PROVIDER_TYPES)[number];

const positive = (min: number, max?: number) => {
  const error =
    max === undefined
      ? `expected an integer of at least ${min}`
      : `expected an integer between ${min} and ${max}`;
  const base = zod.int({ error }).min(min, { error });
  return max === undefined ? base : base.max(max, { error });
};

const providerName = zod
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'expected a provider name (letters, digits, _ or -)' });

const providerSchema = section({
  type: zod.enum(LLM_PROVIDER_TYPES, {
    error: `expected one of ${LLM_PROVIDER_TYPES.join(', ')}`,
  }),
  /** The model used when a request names none; null: the type's default (openaiCompatible: required). */
  model: optionalText().default(null),
  /** Models to offer besides (or, where the API lists none, instead of) the provider's own list. */
  models: zod.array(text(), { error: 'expected a list of model names' }).default([]),
  /** Environment variable holding the key; null: the type's conventional one (OPENAI_API_KEY …). */
  apiKeyEnv: optionalText().default(null),
  /** File holding the key (first line); wins over apiKeyEnv. */
  apiKeyFile: optionalText().default(null),
  /** The API's base URL; null: the conventional variable (OPENAI_BASE_URL …), else the service's. */
  baseUrl: optionalText().default(null),
  /** openai only: the Responses API or Chat Completions. */
  api: zod
    .enum(['responses', 'chat'], { error: 'expected responses or chat' })
    .default('responses'),
  /** The model's context window in tokens; null: llm.contextTokens. */
  contextTokens: positive(1000).nullable().default(null),
});

export const llmSchema = section({
  /** The provider used when a request names none; null: the first one. */
  default: optionalText().default(null),
  providers: zod
    .record(providerName, providerSchema, {
      error: 'expected a mapping of provider names to settings',
    })
    .default({}),
  /** Add providers for the conventional environment variables (OPENAI_API_KEY, …) not configured. */
  fromEnv: zod.boolean({ error: 'expected true or false' }).default(true),
  /** Replaces pgmcp's own system prompt for /api/chat. */
  systemPrompt: optionalText().default(null),
  /** Model calls that run tools, per /api/chat request. */
  maxToolRounds: positive(1, 100).default(10),
  /** Output tokens of one model call. */
  maxOutputTokens: positive(16).default(4096),
  /** Input plus output tokens over all the model calls of one /api/chat request. */
  maxTokensPerRequest: positive(1000).default(200_000),
  /** A tool that fails the same way this many times in one request is not called again. */
  maxSameFailures: positive(1, 20).default(3),
  /** Characters of one tool result the model sees (the client gets the whole result). */
  maxToolResultChars: positive(1000).default(20_000),
  /** Context window assumed for models without their own contextTokens. */
  contextTokens: positive(1000).default(128_000),
  /** Compact the history sent to the model beyond this share of its context window. */
  compactAt: zod
    .number({ error: 'expected a number between 0.1 and 1' })
    .min(0.1, { error: 'expected a number between 0.1 and 1' })
    .max(1, { error: 'expected a number between 0.1 and 1' })
    .default(0.8),
  /** One model call, in milliseconds (the request ends with an error past it). */
  timeoutMs: positive(1000).default(120_000),
  /** Retries of a model call after a 429, a 5xx or a dropped connection. */
  maxRetries: positive(0, 10).default(2),
}).superRefine((llm, ctx) => {
  for (const [name, provider] of Object.entries(llm.providers)) {
    if (provider.type === 'openaiCompatible' && (provider.baseUrl === null || !provider.model)) {
      ctx.addIssue({
        code: 'custom',
        path: ['providers', name],
        message: 'an openaiCompatible provider needs baseUrl and model',
      });
    }
  }
});

export type LlmConfig = z.infer<typeof llmSchema>;
export type LlmProviderConfig = LlmConfig['providers'][string];
