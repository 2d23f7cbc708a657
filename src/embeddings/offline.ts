// The offline provider: feature hashing of words and character trigrams into a fixed number
// of dimensions. No download, no key, the same vector for the same text on every machine.
// It is LEXICAL, not semantic: texts are close when they share words or word pieces
// ("galaxy" and "galaxies" share trigrams), never because they mean the same thing.
//
// sql/demo/002_logbook.sql computes exactly this in SQL (md5 of each feature, the same
// stop words and weights), so the demo ships vectors made by this algorithm without a
// client-side pass; a test checks that the two agree.
import { createHash } from 'node:crypto';
import type { EmbedOptions, EmbeddingBatch, EmbeddingProvider } from './types.js';

export const OFFLINE_MODEL = 'pgmcp-hash-v1';
export const OFFLINE_DEFAULT_DIMENSIONS = 256;

/** Words too common to say anything about a text. Kept short and in step with the SQL twin. */
export const OFFLINE_STOP_WORDS: readonly string[] = [
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'by',
  'for',
  'from',
  'has',
  'have',
  'in',
  'is',
  'it',
  'its',
  'of',
  'on',
  'or',
  'that',
  'the',
  'this',
  'to',
  'was',
  'were',
  'with',
];
const STOP = new Set(OFFLINE_STOP_WORDS);

/** A whole word counts fully; each of its trigrams counts this much. */
const TRIGRAM_WEIGHT = 0.35;

export function offlineWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '' && !STOP.has(word));
}

function bucketOf(feature: string, dimensions: number): { index: number; sign: number } {
  const h = createHash('md5').update(feature, 'utf8').digest().readUInt32BE(0);
  return { index: h % dimensions, sign: h >= 0x80000000 ? -1 : 1 };
}

export function offlineEmbedding(text: string, dimensions: number): number[] {
  // Features are counted per kind: a word and a trigram spelled alike stay two features.
  const counts = new Map<string, { feature: string; weight: number; n: number }>();
  const add = (feature: string, weight: number): void => {
    const key = `${weight}\u0000${feature}`;
    const entry = counts.get(key);
    if (entry) entry.n++;
    else counts.set(key, { feature, weight, n: 1 });
  };
  for (const word of offlineWords(text)) {
    add(word, 1);
    const padded = `<${word}>`;
    for (let i = 0; i < word.length; i++) add(padded.slice(i, i + 3), TRIGRAM_WEIGHT);
  }
  const vector = new Array<number>(dimensions).fill(0);
  for (const { feature, weight, n } of counts.values()) {
    const { index, sign } = bucketOf(feature, dimensions);
    vector[index]! += sign * weight * (1 + Math.log(n));
  }
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return norm === 0 ? vector : vector.map((v) => v / norm);
}

export function createOfflineProvider(
  options: { dimensions?: number; batchSize?: number } = {},
): EmbeddingProvider {
  const dimensions = options.dimensions ?? OFFLINE_DEFAULT_DIMENSIONS;
  return {
    name: 'offline',
    model: OFFLINE_MODEL,
    dimensions,
    batchSize: options.batchSize ?? 256,
    embed(texts: readonly string[], embedOptions: EmbedOptions = {}): Promise<EmbeddingBatch> {
      embedOptions.signal?.throwIfAborted();
      const vectors = texts.map((text) => offlineEmbedding(text, dimensions));
      embedOptions.onProgress?.(texts.length);
      const tokens = texts.reduce((sum, text) => sum + offlineWords(text).length, 0);
      return Promise.resolve({ vectors, tokens });
    },
  };
}
