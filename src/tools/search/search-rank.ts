// The ranking half of similarity_search, free of SQL: candidates arrive from two recalls
// (the vector index and full-text search); each is split into chunks and scored with BM25;
// the vector ranking and the BM25 ranking are fused by reciprocal rank; MMR then picks rows
// that are relevant AND unlike the rows already picked, until top_n or the token budget.

export interface Candidate {
  id: string;
  text: string;
  vector: number[] | null;
  /** Rank in the vector recall (1 = nearest); null when only full-text search found it. */
  vectorRank: number | null;
  distance: number | null;
  /** Rank in the full-text recall; null when only the vector recall found it. */
  textRank: number | null;
}

export interface Chunk {
  text: string;
  tokens: number;
}

export interface Ranked extends Candidate {
  /** The chunk that matches the query best (BM25), shown as the row's excerpt. */
  best: Chunk;
  bm25: number;
  /** Rank by BM25 among all candidates that contain a query word; null otherwise. */
  bm25Rank: number | null;
  /** Fused relevance (reciprocal rank). */
  score: number;
}

export type SearchMethod = 'hybrid' | 'vector' | 'text';

/** Rough token count (about four characters a token for English text). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export function terms(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Split text into chunks of about `size` tokens, on word boundaries. */
export function chunkText(text: string, size: number): Chunk[] {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const chunks: Chunk[] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const word of words) {
    const cost = estimateTokens(word) + 0; // a space costs nothing extra in most tokenizers
    if (current.length > 0 && tokens + cost > size) {
      chunks.push({ text: current.join(' '), tokens });
      current = [];
      tokens = 0;
    }
    current.push(word);
    tokens += cost;
  }
  if (current.length > 0 || chunks.length === 0) chunks.push({ text: current.join(' '), tokens });
  return chunks;
}

const K1 = 1.2;
const B = 0.75;

/** BM25 of every chunk for the query, with statistics from the chunks themselves. */
export function bm25(chunks: readonly string[][], query: readonly string[]): number[] {
  const n = chunks.length;
  if (n === 0) return [];
  const avg = chunks.reduce((sum, c) => sum + c.length, 0) / n || 1;
  const wanted = [...new Set(query)];
  const df = new Map<string, number>();
  for (const chunk of chunks) {
    const present = new Set(chunk);
    for (const term of wanted) if (present.has(term)) df.set(term, (df.get(term) ?? 0) + 1);
  }
  return chunks.map((chunk) => {
    const tf = new Map<string, number>();
    for (const term of chunk) tf.set(term, (tf.get(term) ?? 0) + 1);
    let score = 0;
    for (const term of wanted) {
      const f = tf.get(term) ?? 0;
      if (f === 0) continue;
      const d = df.get(term) ?? 0;
      const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
      score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * chunk.length) / avg));
    }
    return score;
  });
}

/** The constant of reciprocal rank fusion; 60 is the usual choice and rarely worth tuning. */
const RRF_K = 60;

export function rankCandidates(
  candidates: readonly Candidate[],
  queryText: string,
  chunkTokens: number,
  method: SearchMethod,
): Ranked[] {
  const query = terms(queryText);
  const chunked = candidates.map((c) => chunkText(c.text, chunkTokens));
  const flat = chunked.flatMap((chunks, i) => chunks.map((chunk) => ({ i, chunk })));
  const scores = bm25(
    flat.map((f) => terms(f.chunk.text)),
    query,
  );
  const best = candidates.map((_, i) => ({ score: 0, chunk: chunked[i]![0]! }));
  flat.forEach(({ i, chunk }, j) => {
    if (scores[j]! > best[i]!.score) best[i] = { score: scores[j]!, chunk };
  });
  const byBm25 = best
    .map((b, i) => ({ i, score: b.score }))
    .filter((b) => b.score > 0)
    .sort((a, b) => b.score - a.score);
  const bm25Rank = new Map(byBm25.map((b, rank) => [b.i, rank + 1]));
  const ranked = candidates.map((c, i): Ranked => {
    const textRank = bm25Rank.get(i) ?? null;
    const fromVector = c.vectorRank !== null ? 1 / (RRF_K + c.vectorRank) : 0;
    const fromText = textRank !== null ? 1 / (RRF_K + textRank) : 0;
    const score =
      method === 'vector' ? fromVector : method === 'text' ? fromText : fromVector + fromText;
    return { ...c, best: best[i]!.chunk, bm25: best[i]!.score, bm25Rank: textRank, score };
  });
  return ranked.filter((r) => r.score > 0).sort((a, b) => b.score - a.score);
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Maximal marginal relevance: repeatedly take the row with the best
 * lambda * relevance - (1 - lambda) * (greatest similarity to a row already taken).
 * Relevance is the fused score scaled to [0, 1]; similarity is cosine of the row vectors.
 * `fits` says whether one more row still fits the output budget.
 */
export function selectMmr(
  ranked: readonly Ranked[],
  topN: number,
  lambda: number,
  fits: (row: Ranked, taken: readonly Ranked[]) => boolean,
): Ranked[] {
  const max = ranked[0]?.score ?? 1;
  const pool = [...ranked];
  const taken: Ranked[] = [];
  const nearest = new Map<Ranked, number>();
  while (taken.length < topN && pool.length > 0) {
    let bestIndex = 0;
    let bestValue = -Infinity;
    pool.forEach((row, i) => {
      const value = lambda * (row.score / max) - (1 - lambda) * (nearest.get(row) ?? 0);
      if (value > bestValue) {
        bestValue = value;
        bestIndex = i;
      }
    });
    const [row] = pool.splice(bestIndex, 1);
    if (!fits(row!, taken)) break;
    taken.push(row!);
    for (const other of pool) {
      const similarity = row!.vector && other.vector ? cosine(row!.vector, other.vector) : 0;
      if (similarity > (nearest.get(other) ?? 0)) nearest.set(other, similarity);
    }
  }
  return taken;
}
