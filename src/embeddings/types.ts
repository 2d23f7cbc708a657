// What a tool or the CLI needs of an embedding model: texts in, vectors out, with the facts a
// caller checks against a column (model, dimensions) and what it cost (tokens).

export interface EmbeddingBatch {
  vectors: number[][];
  /** Tokens the provider counted for the batch; null when it does not say. */
  tokens: number | null;
}

/** Whether a text is a search query or a stored document; some models embed them differently. */
export type EmbeddingPurpose = 'query' | 'document';

export interface EmbedOptions {
  purpose?: EmbeddingPurpose;
  signal?: AbortSignal;
  /** Called after each batch with the number of texts embedded so far. */
  onProgress?: (done: number) => void;
}

export interface EmbeddingProvider {
  /** The configured name: offline, openai, openaiCompatible, voyage, ollama, gemini. */
  readonly name: string;
  readonly model: string;
  /** Length of every vector; null when the model decides and it has not been seen yet. */
  readonly dimensions: number | null;
  /** Largest number of texts sent in one request. */
  readonly batchSize: number;
  embed(texts: readonly string[], options?: EmbedOptions): Promise<EmbeddingBatch>;
}
