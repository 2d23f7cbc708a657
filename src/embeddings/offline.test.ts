import { describe, expect, it } from 'vitest';
import { createOfflineProvider, offlineEmbedding, offlineWords } from './offline.js';

const cosine = (a: number[], b: number[]): number => a.reduce((s, v, i) => s + v * b[i]!, 0);

describe('the offline provider', () => {
  it('is deterministic, unit length and of the configured size', async () => {
    const p = createOfflineProvider({ dimensions: 64 });
    const { vectors, tokens } = await p.embed(['Faint spiral galaxy', 'Faint spiral galaxy']);
    expect(vectors[0]).toHaveLength(64);
    expect(vectors[0]).toEqual(vectors[1]);
    expect(Math.hypot(...vectors[0]!)).toBeCloseTo(1, 6);
    expect(tokens).toBe(6);
    expect(p.model).toBe('pgmcp-hash-v1');
  });

  it('is lexical: shared words and word pieces bring texts closer', () => {
    const q = offlineEmbedding('spiral galaxies', 256);
    const near = offlineEmbedding('a spiral galaxy in Virgo', 256);
    const far = offlineEmbedding('comet tail near the sun', 256);
    expect(cosine(q, near)).toBeGreaterThan(cosine(q, far) + 0.2);
  });

  it('drops stop words and punctuation', () => {
    expect(offlineWords('The Ring-Nebula, in Lyra!')).toEqual(['ring', 'nebula', 'lyra']);
    expect(offlineEmbedding('', 8)).toEqual(new Array(8).fill(0));
  });
});
