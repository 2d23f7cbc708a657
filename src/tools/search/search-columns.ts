// Which columns of a table similarity_search uses: the vector column to search, the text
// column the vectors were made from (for BM25 and the excerpt), and a tsvector column for
// full-text recall. Found from the catalog: by type, by naming convention, by comment.
import type { ColumnDescriptor, RelationDescriptor } from '../../catalog/index.js';

const TEXT_TYPES = /^(text|character varying|varchar|character|char|citext)\b/;
const TEXT_NAMES = [
  'content',
  'body',
  'text',
  'chunk',
  'document',
  'description',
  'summary',
  'notes',
  'note',
  'title',
  'name',
];
const VECTOR_NAMES = /(^|_)(embedding|embeddings|vector|vec|emb)s?$/;

const isTextColumn = (c: ColumnDescriptor): boolean => TEXT_TYPES.test(c.dataType);

function mentions(comment: string | null, word: string): boolean {
  return comment !== null && new RegExp(`\\b${word.replace(/[^\w]/g, '')}\\b`, 'i').test(comment);
}

/** Vector columns of the table, best candidate first; `dimensions` first when given. */
export function vectorColumns(
  rel: RelationDescriptor,
  dimensions?: number | null,
): ColumnDescriptor[] {
  const score = (c: ColumnDescriptor): number =>
    (dimensions != null && c.vector?.dimensions === dimensions ? 8 : 0) +
    (VECTOR_NAMES.test(c.name) ? 2 : 0) +
    (mentions(c.comment, 'embedding') ? 1 : 0) +
    (c.vector?.type === 'vector' ? 1 : 0);
  return rel.columns
    .filter((c) => c.vector !== null && c.vector.type !== 'sparsevec' && !c.masked)
    .sort((a, b) => score(b) - score(a) || a.position - b.position);
}

/** The text column a vector column was made from. */
export function textColumnFor(
  rel: RelationDescriptor,
  vector: ColumnDescriptor,
): ColumnDescriptor | null {
  const texts = rel.columns.filter((c) => isTextColumn(c) && !c.masked);
  if (texts.length === 0) return null;
  // 1. The vector column's comment names a text column ("Embedding of body").
  const named = texts.find((c) => mentions(vector.comment, c.name));
  if (named) return named;
  // 2. body_embedding → body, embedding_content → content.
  const stem = vector.name.replace(/_?(embedding|embeddings|vector|vec|emb)s?_?/, '');
  const byStem = texts.find((c) => c.name === stem);
  if (byStem) return byStem;
  // 3. A text column whose comment says it is what was embedded.
  const commented = texts.find(
    (c) => mentions(c.comment, 'embedded') || mentions(c.comment, 'embedding'),
  );
  if (commented) return commented;
  // 4. The conventional names, then the first text column.
  for (const name of TEXT_NAMES) {
    const hit = texts.find((c) => c.name === name);
    if (hit) return hit;
  }
  return texts[0]!;
}

export function tsvectorColumn(
  rel: RelationDescriptor,
  text: ColumnDescriptor | null,
): ColumnDescriptor | null {
  const all = rel.columns.filter((c) => c.dataType === 'tsvector' && !c.masked);
  if (all.length === 0) return null;
  const gin = new Set(
    rel.indexes.filter((i) => i.method === 'gin' && i.valid).flatMap((i) => i.columns),
  );
  const fromText = text ? all.find((c) => c.generated?.expression.includes(text.name)) : undefined;
  return fromText ?? all.find((c) => gin.has(c.name)) ?? all[0]!;
}
