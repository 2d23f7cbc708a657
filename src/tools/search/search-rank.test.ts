import { describe, expect, it } from 'vitest';
import { bm25, chunkText, rankCandidates, selectMmr, type Candidate } from './search-rank.js';

const candidate = (id: string, text: string, over: Partial<Candidate> = {}): Candidate => ({
  id,
  text,
  vector: null,
  vectorRank: null,
  distance: null,
  textRank: null,
  ...over,
});

describe('ranking for similarity_search', () => {
  it('chunks on word boundaries within the token size', () => {
    const chunks = chunkText('one two six ten red fox big owl', 4);
    expect(chunks.map((c) => c.text)).toEqual(['one two six ten', 'red fox big owl']);
    expect(chunkText('', 10)).toEqual([{ text: '', tokens: 0 }]);
  });

  it('scores rare query words above common ones (BM25)', () => {
    const docs = [
      ['dew', 'night'],
      ['night', 'sky'],
      ['night', 'clear'],
      ['night', 'dew', 'dew'],
    ];
    const scores = bm25(docs, ['dew', 'night']);
    expect(scores[3]).toBeGreaterThan(scores[0]!);
    expect(scores[0]).toBeGreaterThan(scores[1]!);
  });

  it('puts a row found by both recalls ahead of rows found by one (reciprocal rank)', () => {
    const ranked = rankCandidates(
      [
        candidate('vector-only', 'nothing in common', { vectorRank: 3 }),
        candidate('both', 'the dew heater', { vectorRank: 2 }),
        candidate('text-only', 'dew heater dew', { textRank: 1 }),
      ],
      'dew heater',
      100,
      'hybrid',
    );
    expect(ranked.map((r) => r.id)).toEqual(['both', 'text-only', 'vector-only']);
    expect(ranked[0]!.best.text).toBe('the dew heater');
    const vectorOnly = rankCandidates(
      [candidate('a', 'x', { vectorRank: 2 }), candidate('b', 'dew', { textRank: 1 })],
      'dew',
      100,
      'vector',
    );
    expect(vectorOnly.map((r) => r.id)).toEqual(['a']);
  });

  it('diversifies with MMR and stops at the budget', () => {
    const ranked = rankCandidates(
      [
        candidate('a', 'dew', { vectorRank: 1, vector: [1, 0] }),
        candidate('a2', 'dew', { vectorRank: 2, vector: [1, 0] }),
        candidate('b', 'dew', { vectorRank: 3, vector: [0, 1] }),
      ],
      'dew',
      100,
      'vector',
    );
    expect(selectMmr(ranked, 2, 1, () => true).map((r) => r.id)).toEqual(['a', 'a2']);
    expect(selectMmr(ranked, 2, 0.5, () => true).map((r) => r.id)).toEqual(['a', 'b']);
    expect(selectMmr(ranked, 3, 1, (_, taken) => taken.length < 1).map((r) => r.id)).toEqual(['a']);
  });
});
