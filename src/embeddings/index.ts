// The configured embedding providers, built once and looked up by name.
import type { EmbeddingsConfig } from '../config/index.js';
import { unknownProvider } from './errors.js';
import { createOfflineProvider } from './offline.js';
import { createRemoteProvider, REMOTE_KINDS, type RemoteRuntime } from './remote.js';
import type { EmbeddingProvider } from './types.js';

export interface EmbeddingProviders {
  /** The name used when a call names none (embeddings.provider). */
  readonly defaultName: string;
  readonly names: readonly string[];
  /** The named provider, or the default; an unknown name is an input error. */
  get(name?: string): EmbeddingProvider;
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
  return {
    defaultName: config.provider,
    names,
    get(name) {
      const provider = providers.get(name ?? config.provider);
      if (!provider) throw unknownProvider(name ?? config.provider, names);
      return provider;
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
