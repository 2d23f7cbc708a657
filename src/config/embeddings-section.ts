// The `embeddings` section: the providers that turn text into vectors (offline, or reached
// over HTTP, each with its own defaults) for similarity_search, generate_embedding and embed.
import { intIn } from './fields.js';
import { optionalText, section, text, zod } from './zod.js';

export const EMBEDDING_PROVIDERS = [
  'offline',
  'openai',
  'openaiCompatible',
  'voyage',
  'ollama',
  'gemini',
] as const;

export interface RemoteDefaults {
  model: string;
  apiKeyEnv: string | null;
  baseUrl: string | null;
  batchSize: number;
}

// One shape for every provider reached over HTTP; only the defaults differ.
export const remoteProvider = (defaults: RemoteDefaults) =>
  section({
    model: text().default(defaults.model),
    /** Ask for (and check) this many dimensions; null: whatever the model returns. */
    dimensions: intIn(1, 16000).nullable().default(null),
    /** Environment variable that holds the API key. */
    apiKeyEnv: optionalText().default(defaults.apiKeyEnv),
    /** File that holds the API key; wins over apiKeyEnv. */
    apiKeyFile: optionalText().default(null),
    baseUrl: optionalText().default(defaults.baseUrl),
    batchSize: intIn(1, 2048).default(defaults.batchSize),
    timeoutMs: intIn(100).default(30_000),
    /** Retries after a 429, a 5xx or a dropped connection, with exponential backoff. */
    maxRetries: intIn(0, 10).default(3),
  }).prefault({});

export const embeddingsSchema = section({
  /** The provider generate_embedding, similarity_search and pgmcp embed use by default. */
  provider: zod
    .enum(EMBEDDING_PROVIDERS, { error: `expected one of ${EMBEDDING_PROVIDERS.join(', ')}` })
    .default('offline'),
  offline: section({
    dimensions: intIn(8, 2000).default(256),
    batchSize: intIn(1, 10_000).default(256),
  }).prefault({}),
  openai: remoteProvider({
    model: 'text-embedding-3-small',
    apiKeyEnv: 'OPENAI_API_KEY',
    baseUrl: null,
    batchSize: 256,
  }),
  openaiCompatible: remoteProvider({
    model: 'text-embedding',
    apiKeyEnv: null,
    baseUrl: null,
    batchSize: 64,
  }),
  voyage: remoteProvider({
    model: 'voyage-3.5-lite',
    apiKeyEnv: 'VOYAGE_API_KEY',
    baseUrl: null,
    batchSize: 128,
  }),
  ollama: remoteProvider({
    model: 'nomic-embed-text',
    apiKeyEnv: null,
    baseUrl: null,
    batchSize: 64,
  }),
  gemini: remoteProvider({
    model: 'gemini-embedding-001',
    apiKeyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY',
    baseUrl: null,
    batchSize: 100,
  }),
}).superRefine((e, ctx) => {
  if (e.provider === 'openaiCompatible' && e.openaiCompatible.baseUrl === null) {
    ctx.addIssue({
      code: 'custom',
      path: ['openaiCompatible', 'baseUrl'],
      message: 'is required when embeddings.provider is openaiCompatible',
    });
  }
});
