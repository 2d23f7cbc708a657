import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../config/index.js';
import { ErrorCodes } from '../core/errors.js';
import { providerFailure, scrubSecrets } from './errors.js';
import { createLlmProviders } from './providers.js';
import { statementWrites } from './chat-tools.js';

const llm = (section: Record<string, unknown> = {}) => configSchema.parse({ llm: section }).llm;

describe('LLM providers', () => {
  it('come from the conventional variables, named after their type', () => {
    const providers = createLlmProviders(llm(), {
      ANTHROPIC_API_KEY: 'a-key',
      OPENAI_API_KEY: 'o-key',
      OLLAMA_HOST: '10.0.0.5',
    });
    expect(providers.list()).toEqual([
      {
        name: 'anthropic',
        type: 'anthropic',
        defaultModel: 'claude-sonnet-4-20250514',
        isDefault: true,
      },
      { name: 'openai', type: 'openai', defaultModel: 'gpt-4o-mini', isDefault: false },
      { name: 'ollama', type: 'ollama', defaultModel: 'llama3.1', isDefault: false },
    ]);
    expect(providers.get('ollama').baseUrl).toBe('http://10.0.0.5:11434');
    expect(providers.secrets().sort()).toEqual(['a-key', 'o-key']);
    expect(JSON.stringify(providers.list())).not.toContain('key');
  });

  it('take the configured ones first, and the base URL from the conventional variable', () => {
    const providers = createLlmProviders(
      llm({
        default: 'work',
        providers: { work: { type: 'openai', model: 'gpt-x', apiKeyEnv: 'WORK_KEY' } },
      }),
      { WORK_KEY: 'w', OPENAI_BASE_URL: 'http://proxy.local/v1/' },
    );
    const work = providers.get(null);
    expect(work).toMatchObject({
      name: 'work',
      defaultModel: 'gpt-x',
      baseUrl: 'http://proxy.local/v1',
    });
    expect(work.key()).toBe('w');
  });

  it('refuse clearly when none is configured, a name is unknown, or a key is missing', () => {
    const none = createLlmProviders(llm({ fromEnv: false }), { OPENAI_API_KEY: 'x' });
    expect(() => none.get(null)).toThrow(
      expect.objectContaining({ code: ErrorCodes.LLM_NOT_CONFIGURED }),
    );
    const one = createLlmProviders(llm({ providers: { o: { type: 'openai' } } }), {});
    expect(() => one.get('p')).toThrow(
      expect.objectContaining({ code: ErrorCodes.LLM_PROVIDER_UNKNOWN }),
    );
    expect(() => one.get('o').languageModel('m')).toThrow(/set OPENAI_API_KEY/);
    const badDefault = createLlmProviders(
      llm({ default: 'openai', providers: { o: { type: 'ollama' } } }),
      {},
    );
    expect(() => badDefault.get(null)).toThrow(/llm.default names openai/);
  });

  it('config refuses an openaiCompatible provider without its URL and model', () => {
    expect(() => llm({ providers: { x: { type: 'openaiCompatible' } } })).toThrow(
      /baseUrl and model/,
    );
  });
});

describe('provider errors', () => {
  it('never carry a key', () => {
    const error = new APICallError({
      message: 'Incorrect API key provided: sk-proj-abcdefgh1234. Find your key at …',
      url: 'https://api.openai.com/v1/responses',
      requestBodyValues: {},
      statusCode: 401,
      data: { error: { message: 'Incorrect API key provided: sk-proj-abcdefgh1234.' } },
    });
    const failure = providerFailure(error, 'openai', ['sk-proj-abcdefgh1234']);
    expect(failure.code).toBe(ErrorCodes.LLM_PROVIDER_FAILED);
    expect(failure.message).toMatch(/openai refused the API key/);
    expect(failure.message).not.toContain('abcdefgh');
    expect(scrubSecrets('key=AIzaSyA1234567890abcdef and my-secret', ['my-secret'])).toBe(
      'key=[redacted] and [redacted]',
    );
  });
});

describe('statementWrites', () => {
  it('judges with the SQL guard', async () => {
    const { loadSqlParser } = await import('../tools/sql-guard.js');
    await loadSqlParser();
    expect(statementWrites('SELECT 1')).toBe(false);
    expect(statementWrites('DELETE FROM t')).toBe(true);
    expect(statementWrites('delete from t at postgres://h/db')).toBe(true);
    expect(statementWrites('SELECT 1; DELETE FROM t')).toBe(false); // refused when it runs
    expect(statementWrites(42)).toBe(false);
  });
});
