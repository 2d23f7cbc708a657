// The configured embedding providers, built once and looked up by name.
import type { EmbeddingsConfig } from '../config/index.js';
import { modelNotServed, unknownProvider } from './errors.js';
import { createOfflineProvider } from './offline.js';
import { createRemoteProvider, REMOTE_KINDS, type RemoteRuntime } from './remote.js';
import type { EmbeddingProvider } from './types.js';

export interface EmbeddingProviders {
  /** The name used when a call names none (embeddings.provider). */
  readonly defaultName: string;
  readonly names: readonly string[];
  /** The named provider (or the default), optionally with another model of the same service. */
  get(name?: string, model?: string): EmbeddingProvider;
}

export function createEmbeddingProviders(
  config: EmbeddingsConfig,
  runtime: RemoteRuntime = {},
): EmbeddingProviders {
  const providers = new Map<string, EmbeddingProvider>();
  providers.set('offline', createOfflineProvider(config.offline));
  for (const kind of REMOTE_KINDS) {
    providers.set(kind, createRemoteProvider(kind, config[kind], runtime));
  }
  const names = [...providers.keys()];
  const variants = new Map<string, EmbeddingProvider>();
  return {
    defaultName: config.provider,
    names,
    get(name, model) {
      const key = name ?? config.provider;
      const provider = providers.get(key);
      if (!provider) throw unknownProvider(key, names);
      if (model === undefined || model === provider.model) return provider;
      const variantKey = `${key}\u0000${model}`;
      let variant = variants.get(variantKey);
      if (!variant) {
        // The offline provider has one model: answering another name with it would hand back
        // vectors of a model the caller did not ask for.
        if (key === 'offline') throw modelNotServed(key, model, [provider.model]);
        const kind = key as (typeof REMOTE_KINDS)[number];
        variant = createRemoteProvider(kind, { ...config[kind], model, dimensions: null }, runtime);
        variants.set(variantKey, variant);
      }
      return variant;
    },
  };
}

export { dimensionMismatch } from './errors.js';
export {
  createOfflineProvider,
  offlineEmbedding,
  OFFLINE_DEFAULT_DIMENSIONS,
  OFFLINE_MODEL,
  OFFLINE_STOP_WORDS,
} from './offline.js';
export {
  createRemoteProvider,
  REMOTE_KINDS,
  type RemoteKind,
  type RemoteRuntime,
} from './remote.js';
export type { EmbeddingBatch, EmbeddingProvider, EmbedOptions, EmbeddingPurpose } from './types.js';
