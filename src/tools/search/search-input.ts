// similarity_search's input: its description, its JSON Schema, and the defaults both the schema
// and the call use (one place, so what the schema announces is what the call does).
import type { JsonSchema } from '../../core/json-schema.js';
import type { SearchMethod } from './search-rank.js';

export const METRICS = { cosine: '<=>', l2: '<->', inner_product: '<#>' } as const;
export type Metric = keyof typeof METRICS;
export const FORMATS = ['full', 'summary', 'ids_only'] as const;
export type Format = (typeof FORMATS)[number];

/** The defaults the input schema announces, and the call uses when an argument is left out. */
export const DEFAULTS: {
  top_n: number;
  chunk_size_tokens: number;
  lambda: number;
  max_output_tokens: number;
  distance_metric: Metric;
  output_format: Format;
  method: SearchMethod;
} = {
  top_n: 10,
  chunk_size_tokens: 100,
  lambda: 0.6,
  max_output_tokens: 1000,
  distance_metric: 'cosine',
  output_format: 'full',
  method: 'hybrid',
};

export const DESCRIPTION = [
  'Find the rows of one table that best match a text, by meaning and by words at once.',
  'The query is embedded and compared with the vector column (pgvector index), and matched with full-text search over the text column; both candidate lists are fused, scored with BM25 over chunks of the text, and diversified with MMR (lambda: 1 = only relevance, 0 = only diversity) within max_output_tokens.',
  "Vector and text columns are found automatically (get_schema_info with vector_tables_only=true lists the tables); `filter` is ONE boolean SQL expression over the table's columns, as in count_rows.",
  'Example: {"table_name": "demo.logbook_entries", "query_text": "dew on the optics ruined the night", "top_n": 5}.',
].join(' ');

export const INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    table_name: {
      type: 'string',
      minLength: 1,
      description: 'Table to search, optionally schema-qualified (demo.logbook_entries).',
    },
    query_text: {
      type: 'string',
      minLength: 1,
      maxLength: 8000,
      description: 'What to look for, in plain language.',
    },
    top_n: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: DEFAULTS.top_n,
      description: 'Most rows to return.',
    },
    chunk_size_tokens: {
      type: 'integer',
      minimum: 10,
      maximum: 2000,
      default: DEFAULTS.chunk_size_tokens,
      description:
        'Size of the text chunks scored with BM25; the best chunk is each row’s excerpt.',
    },
    lambda: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: DEFAULTS.lambda,
      description: 'MMR balance: 1 = relevance only, 0 = diversity only.',
    },
    max_output_tokens: {
      type: 'integer',
      minimum: 50,
      maximum: 100000,
      default: DEFAULTS.max_output_tokens,
      description: 'Token budget of the answer; rows that do not fit are left out.',
    },
    distance_metric: {
      type: 'string',
      enum: Object.keys(METRICS),
      default: DEFAULTS.distance_metric,
      description: 'pgvector distance; use the one the vector index was built for.',
    },
    output_format: {
      type: 'string',
      enum: [...FORMATS],
      default: DEFAULTS.output_format,
      description:
        'full: every visible column and the excerpt; summary: keys and excerpt; ids_only: keys and scores.',
    },
    filter: {
      type: 'string',
      description:
        "One boolean expression over the table's columns, without WHERE, e.g. kind = 'galaxy'.",
    },
    method: {
      type: 'string',
      enum: ['hybrid', 'vector', 'text'],
      default: DEFAULTS.method,
      description: 'hybrid (default), or one recall alone for comparison.',
    },
    provider: {
      type: 'string',
      description:
        'Embedding provider for the query (default: the configured one); must be the one that filled the column.',
    },
    vector_column: {
      type: 'string',
      description: 'Vector column to use when the table has several.',
    },
    text_column: {
      type: 'string',
      description: 'Text column the vectors were made from, when it cannot be guessed.',
    },
  },
  required: ['table_name', 'query_text'],
  additionalProperties: false,
};
