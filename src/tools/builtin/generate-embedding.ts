// generate_embedding: the vector a configured provider makes of a text, with what a caller
// needs to use it (model, dimensions, tokens). Touches no database.
import type { ToolSpec } from '../../core/specs.js';
import type { EmbeddingProviders } from '../../embeddings/index.js';
import { invalidInput } from '../common/support.js';

export function createGenerateEmbeddingTool(embeddings: EmbeddingProviders): ToolSpec {
  return {
    name: 'generate_embedding',
    title: 'Generate embedding',
    description: `Turn a text into an embedding vector with a configured provider (default: ${embeddings.defaultName}; configured: ${embeddings.names.join(', ')}). Returns the vector with its provider, model, dimensions and token count. Use similarity_search to search a table; use this to compare texts or to write vectors yourself.`,
    inputSchema: {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 32000, description: 'The text to embed.' },
        provider: {
          type: 'string',
          enum: [...embeddings.names],
          description: 'Embedding provider.',
        },
        model: { type: 'string', minLength: 1, description: 'Another model of the same provider.' },
      },
      required: ['text'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        provider: { type: 'string' },
        model: { type: 'string' },
        dimensions: { type: 'integer' },
        tokens: { type: ['integer', 'null'] },
        embedding: { type: 'array', items: { type: 'number' } },
      },
      required: ['provider', 'model', 'dimensions', 'tokens', 'embedding'],
    },
    annotations: {
      title: 'Generate embedding',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    },
    async call(args, ctx) {
      const text = args['text'] as string;
      if (text.trim() === '') throw invalidInput('text is empty.');
      const provider = embeddings.get(
        args['provider'] as string | undefined,
        args['model'] as string | undefined,
      );
      const { vectors, tokens } = await provider.embed([text], {
        purpose: 'query',
        signal: ctx.signal,
      });
      const embedding = vectors[0]!;
      const result = {
        provider: provider.name,
        model: provider.model,
        dimensions: embedding.length,
        tokens,
        embedding,
      };
      return {
        content: [
          {
            type: 'text',
            text: `${provider.name}/${provider.model}: ${embedding.length} dimensions${tokens !== null ? `, ${tokens} tokens` : ''}.\n[${embedding.join(',')}]`,
          },
        ],
        structuredContent: result,
      };
    },
  };
}
