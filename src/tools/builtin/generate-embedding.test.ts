import { describe, expect, it } from 'vitest';
import { configSchema } from '../../config/schema.js';
import { isAppError } from '../../core/errors.js';
import { createEmbeddingProviders, OFFLINE_MODEL } from '../../embeddings/index.js';
import { createFakeContext } from '../../testing/fake-context.js';
import { createGenerateEmbeddingTool } from './generate-embedding.js';

const tool = createGenerateEmbeddingTool(
  createEmbeddingProviders(configSchema.parse({}).embeddings),
);

describe('generate_embedding', () => {
  it('answers with the model asked for when the provider serves it', async () => {
    const result = await tool.call({ text: 'x', model: OFFLINE_MODEL }, createFakeContext().ctx);
    expect(result.structuredContent).toMatchObject({ provider: 'offline', model: OFFLINE_MODEL });
  });

  it('refuses a model the provider does not serve with PGMCP703', async () => {
    const error = await Promise.resolve(
      tool.call({ text: 'x', model: 'other' }, createFakeContext().ctx),
    ).catch((e: unknown) => e);
    expect(isAppError(error) && error.code).toBe('PGMCP703');
    expect(isAppError(error) && error.category).toBe('input');
    expect((error as Error).message).toContain("no model 'other'");
  });
});
