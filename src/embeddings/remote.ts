// Providers reached over HTTP, all through the AI SDK's embedding models: OpenAI (and any
// endpoint that speaks its API), Voyage, Ollama and Gemini. The SDK speaks each wire format;
// this file adds what a database tool needs around it: batches, retries with backoff that
// tests can run without waiting, a timeout, and errors that say what to fix.
import { readFileSync } from 'node:fs';
import type { EmbeddingModel } from 'ai';
import { isAppError } from '../core/errors.js';
import {
  dimensionMismatch,
  missingKey,
  providerFailed,
  providerUnreachable,
  unknownModel,
} from './errors.js';
import { withRetry } from './retry.js';
import type * as Sdk from './remote-sdk.js';
import type { EmbedOptions, EmbeddingBatch, EmbeddingProvider } from './types.js';

export const REMOTE_KINDS = ['openai', 'openaiCompatible', 'voyage', 'ollama', 'gemini'] as const;
export type RemoteKind = (typeof REMOTE_KINDS)[number];

export interface RemoteProviderSettings {
  model: string;
  /** Ask the model for this many dimensions (where it can shorten) and check every vector. */
  dimensions: number | null;
  /** The environment variable holding the API key. */
  apiKeyEnv: string | null;
  /** A file holding the API key (wins over apiKeyEnv). */
  apiKeyFile: string | null;
  baseUrl: string | null;
  batchSize: number;
  timeoutMs: number;
  maxRetries: number;
}

export interface RemoteRuntime {
  env?: Readonly<Record<string, string | undefined>>;
  /** Backoff wait; tests pass one that resolves at once. */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
  baseDelayMs?: number;
}

const DEFAULT_URLS: Record<RemoteKind, string> = {
  openai: 'https://api.openai.com/v1',
  openaiCompatible: '',
  voyage: 'https://api.voyageai.com/v1',
  ollama: 'http://127.0.0.1:11434/api',
  gemini: 'https://generativelanguage.googleapis.com/v1beta',
};

const NEEDS_KEY: Record<RemoteKind, boolean> = {
  openai: true,
  openaiCompatible: false,
  voyage: true,
  ollama: false,
  gemini: true,
};

function readKey(kind: RemoteKind, settings: RemoteProviderSettings, runtime: RemoteRuntime) {
  if (settings.apiKeyFile !== null) {
    try {
      const key = readFileSync(settings.apiKeyFile, 'utf8').trim();
      if (key !== '') return key;
    } catch {
      // Reported below as a missing key, naming the file.
    }
    throw missingKey(kind, `a key in ${settings.apiKeyFile} (embeddings.${kind}.apiKeyFile)`);
  }
  const env = runtime.env ?? process.env;
  const key = settings.apiKeyEnv !== null ? env[settings.apiKeyEnv]?.trim() : undefined;
  if (key) return key;
  if (NEEDS_KEY[kind]) {
    throw missingKey(
      kind,
      settings.apiKeyEnv !== null
        ? `the environment variable ${settings.apiKeyEnv} (or embeddings.${kind}.apiKeyFile)`
        : `embeddings.${kind}.apiKeyEnv or embeddings.${kind}.apiKeyFile`,
    );
  }
  return undefined;
}

type ProviderOptions = NonNullable<Parameters<typeof Sdk.embedMany>[0]['providerOptions']>;

/**
 * The AI SDK and its providers, loaded with the first batch: a server that never embeds a
 * text (most of them) never pays for loading them.
 */
let sdk: typeof Sdk | undefined;
const loadSdk = async (): Promise<typeof Sdk> => (sdk ??= await import('./remote-sdk.js'));
/** Only after loadSdk(): errors reach these from an SDK call. */
const isApiCallError = (error: unknown): error is Sdk.APICallError =>
  sdk?.APICallError.isInstance(error) === true;

function providerOptions(
  kind: RemoteKind,
  dimensions: number | null,
  purpose: 'query' | 'document',
): ProviderOptions {
  switch (kind) {
    case 'openai':
    case 'openaiCompatible':
      return dimensions !== null ? { openai: { dimensions } } : {};
    case 'voyage':
      return {
        voyage: {
          inputType: purpose,
          ...(dimensions !== null ? { outputDimension: dimensions } : {}),
        },
      };
    case 'ollama':
      return dimensions !== null ? { ollama: { dimensions } } : {};
    case 'gemini':
      return {
        google: {
          taskType: purpose === 'query' ? 'RETRIEVAL_QUERY' : 'RETRIEVAL_DOCUMENT',
          ...(dimensions !== null ? { outputDimensionality: dimensions } : {}),
        },
      };
  }
}

const MODEL_MISSING = /model|not found|does not exist|not supported|unknown/i;

function bodyMessage(body: string | undefined): string {
  if (!body) return '';
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const error = parsed['error'] ?? parsed['detail'] ?? parsed['message'];
    if (typeof error === 'string') return error;
    if (error && typeof error === 'object' && 'message' in error) return String(error.message);
  } catch {
    // Not JSON: use the text itself.
  }
  return body.slice(0, 300);
}

function statusOf(error: unknown): number | undefined {
  return isApiCallError(error) ? error.statusCode : undefined;
}

function retryable(error: unknown): boolean {
  if (!isApiCallError(error)) return false;
  const status = error.statusCode;
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

function retryAfter(error: unknown): number | undefined {
  if (!isApiCallError(error)) return undefined;
  const header = error.responseHeaders?.['retry-after'];
  const seconds = header !== undefined ? Number(header) : NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

export function createRemoteProvider(
  kind: RemoteKind,
  settings: RemoteProviderSettings,
  runtime: RemoteRuntime = {},
): EmbeddingProvider {
  const baseURL = (settings.baseUrl ?? DEFAULT_URLS[kind]).replace(/\/+$/, '');
  let model: EmbeddingModel | undefined;
  let seenDimensions: number | null = settings.dimensions;

  const classify = (error: unknown, timedOut: boolean): Error => {
    if (isAppError(error)) return error;
    if (timedOut) {
      return providerUnreachable(
        kind,
        baseURL,
        new Error(`no answer within ${settings.timeoutMs} ms`),
      );
    }
    const status = statusOf(error);
    if (isApiCallError(error)) {
      const message = bodyMessage(error.responseBody) || error.message;
      if (status === undefined) return providerUnreachable(kind, baseURL, error.cause ?? error);
      if (
        status === 404 ||
        (status === 400 && MODEL_MISSING.test(message) && /model/i.test(message))
      )
        return unknownModel(kind, settings.model, message);
      return providerFailed(kind, status, message, error);
    }
    return providerFailed(
      kind,
      undefined,
      error instanceof Error ? error.message : String(error),
      error,
    );
  };

  const embedBatch = async (
    texts: readonly string[],
    options: EmbedOptions,
  ): Promise<EmbeddingBatch> => {
    const apiKey = readKey(kind, settings, runtime);
    const { buildModel, embedMany } = await loadSdk();
    model ??= buildModel(kind, baseURL, apiKey, settings.model);
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const result = await withRetry(
        () =>
          embedMany({
            model: model!,
            values: [...texts],
            maxRetries: 0,
            abortSignal: signal,
            providerOptions: providerOptions(kind, settings.dimensions, options.purpose ?? 'query'),
          }),
        {
          retries: settings.maxRetries,
          baseDelayMs: runtime.baseDelayMs ?? 500,
          isRetryable: retryable,
          retryAfterMs: retryAfter,
          signal,
          ...(runtime.wait ? { wait: runtime.wait } : {}),
        },
      );
      const tokens = result.usage?.tokens;
      return {
        vectors: result.embeddings,
        tokens: typeof tokens === 'number' && Number.isFinite(tokens) ? tokens : null,
      };
    } catch (error) {
      options.signal?.throwIfAborted();
      throw classify(error, timeout.aborted);
    }
  };

  return {
    name: kind,
    model: settings.model,
    get dimensions() {
      return seenDimensions;
    },
    batchSize: settings.batchSize,
    async embed(texts, options = {}) {
      const vectors: number[][] = [];
      let tokens: number | null = null;
      for (let start = 0; start < texts.length; start += settings.batchSize) {
        const batch = await embedBatch(texts.slice(start, start + settings.batchSize), options);
        for (const vector of batch.vectors) {
          if (seenDimensions !== null && vector.length !== seenDimensions) {
            throw dimensionMismatch(
              vector.length,
              seenDimensions,
              `embeddings.${kind}.dimensions`,
              `Set embeddings.${kind}.dimensions to what ${settings.model} returns, or pick a model that can return ${seenDimensions}.`,
            );
          }
          seenDimensions ??= vector.length;
          vectors.push(vector);
        }
        if (batch.tokens !== null) tokens = (tokens ?? 0) + batch.tokens;
        options.onProgress?.(vectors.length);
      }
      return { vectors, tokens };
    },
  };
}
