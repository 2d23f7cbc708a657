// The configured model providers, from `llm.providers` and the conventional environment
// variables, each turned into an AI SDK provider on first use. Keys are read here and handed
// only to the provider libraries: no view, log line or error message carries them.
import { readFileSync } from 'node:fs';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogle } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import { NO_METRICS, type Metrics } from '../core/metrics.js';
import { countedModel } from './model-metrics.js';
import { createOllama } from 'ollama-ai-provider-v2';
import type { LlmConfig, LlmProviderConfig, LlmProviderType } from '../config/index.js';
import { AppError, ErrorCodes } from '../core/errors.js';

/** What the conventional environment variables and the service defaults give each type. */
interface TypeDefaults {
  model: string;
  keyEnv: string | null;
  baseUrlEnv: string | null;
  baseUrl: string | null;
  /** Whether calls need a key (Ollama and most compatible servers do not). */
  needsKey: boolean;
}

export const TYPE_DEFAULTS: Record<LlmProviderType, TypeDefaults> = {
  openai: {
    model: 'gpt-4o-mini',
    keyEnv: 'OPENAI_API_KEY',
    baseUrlEnv: 'OPENAI_BASE_URL',
    baseUrl: 'https://api.openai.com/v1',
    needsKey: true,
  },
  openaiCompatible: {
    model: '',
    keyEnv: null,
    baseUrlEnv: null,
    baseUrl: null,
    needsKey: false,
  },
  anthropic: {
    model: 'claude-sonnet-4-20250514',
    keyEnv: 'ANTHROPIC_API_KEY',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    baseUrl: 'https://api.anthropic.com/v1',
    needsKey: true,
  },
  google: {
    model: 'gemini-2.5-flash',
    keyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY',
    baseUrlEnv: null,
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    needsKey: true,
  },
  ollama: {
    model: 'llama3.1',
    keyEnv: null,
    baseUrlEnv: null,
    baseUrl: 'http://127.0.0.1:11434',
    needsKey: false,
  },
};

/** What anyone may see of a provider (GET /api/llm/providers). */
export interface ProviderView {
  name: string;
  type: LlmProviderType;
  defaultModel: string;
  isDefault: boolean;
}

export interface LlmProvider extends ProviderView {
  /** The API's base URL (for Ollama, the host, without /api). */
  readonly baseUrl: string;
  /** Models configured for it (llm.providers.<name>.models). */
  readonly configuredModels: readonly string[];
  /** The model's context window in tokens. */
  readonly contextTokens: number;
  /** The key, or null; only for the provider libraries and the models listing. */
  key(): string | null;
  languageModel(modelId: string): LanguageModel;
}

export interface LlmProviders {
  list(): ProviderView[];
  /** The named provider, or the default one; throws LLM_NOT_CONFIGURED / LLM_PROVIDER_UNKNOWN. */
  get(name?: string | null): LlmProvider;
  /** Every key in use, so messages can be cleaned of them. */
  secrets(): string[];
}

/** OLLAMA_HOST is host[:port] or a URL; Ollama's own clients read it so. */
function ollamaHost(raw: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  const url = new URL(withScheme);
  if (url.port === '' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) url.port = '11434';
  return url.toString().replace(/\/+$/, '');
}

function readKey(
  name: string,
  settings: LlmProviderConfig,
  env: NodeJS.ProcessEnv,
): () => string | null {
  const defaults = TYPE_DEFAULTS[settings.type];
  let cached: string | null | undefined;
  return () => {
    if (cached !== undefined) return cached;
    if (settings.apiKeyFile !== null) {
      try {
        cached = readFileSync(settings.apiKeyFile, 'utf8').split(/\r?\n/)[0]!.trim() || null;
      } catch {
        throw new AppError(
          ErrorCodes.LLM_NOT_CONFIGURED,
          `llm.providers.${name}.apiKeyFile cannot be read.`,
          { category: 'config' },
        );
      }
      return cached;
    }
    const variable = settings.apiKeyEnv ?? defaults.keyEnv;
    cached = variable === null ? null : env[variable]?.trim() || null;
    return cached;
  };
}

function providerFrom(
  name: string,
  settings: LlmProviderConfig,
  env: NodeJS.ProcessEnv,
  llm: LlmConfig,
  isDefault: boolean,
  metrics: Metrics,
): LlmProvider {
  const defaults = TYPE_DEFAULTS[settings.type];
  const fromEnv = defaults.baseUrlEnv ? env[defaults.baseUrlEnv]?.trim() || null : null;
  let baseUrl = settings.baseUrl ?? fromEnv ?? defaults.baseUrl ?? '';
  if (settings.type === 'ollama') {
    baseUrl = ollamaHost(settings.baseUrl ?? (env['OLLAMA_HOST']?.trim() || defaults.baseUrl!));
  }
  baseUrl = baseUrl.replace(/\/+$/, '');
  const key = readKey(name, settings, env);
  const requireKey = (): string => {
    const value = key();
    if (value !== null) return value;
    if (!defaults.needsKey) return '';
    const variable = settings.apiKeyEnv ?? defaults.keyEnv;
    throw new AppError(
      ErrorCodes.LLM_NOT_CONFIGURED,
      `The provider ${name} has no API key: set ${variable ?? 'its key variable'} or llm.providers.${name}.apiKeyFile.`,
      { category: 'config' },
    );
  };
  const defaultModel = settings.model ?? defaults.model;
  let factory: ((modelId: string) => LanguageModel) | undefined;
  const build = (): ((modelId: string) => LanguageModel) => {
    const apiKey = requireKey();
    switch (settings.type) {
      case 'openai': {
        const openai = createOpenAI({ apiKey, baseURL: baseUrl });
        return settings.api === 'chat' ? (id) => openai.chat(id) : (id) => openai.responses(id);
      }
      case 'openaiCompatible': {
        // Compatible servers speak Chat Completions; most ignore the key or need none.
        const compatible = createOpenAI({ apiKey: apiKey || 'none', baseURL: baseUrl });
        return (id) => compatible.chat(id);
      }
      case 'anthropic': {
        const anthropic = createAnthropic({ apiKey, baseURL: baseUrl });
        return (id) => anthropic(id);
      }
      case 'google': {
        const google = createGoogle({ apiKey, baseURL: baseUrl });
        return (id) => google(id);
      }
      case 'ollama': {
        const ollama = createOllama({
          baseURL: `${baseUrl}/api`,
          ...(apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : {}),
        });
        return (id) => ollama(id);
      }
    }
  };
  return {
    name,
    type: settings.type,
    defaultModel,
    isDefault,
    baseUrl,
    configuredModels: settings.models,
    contextTokens: settings.contextTokens ?? llm.contextTokens,
    key,
    languageModel(modelId) {
      factory ??= build();
      const model =
        modelId === defaultModel || settings.models.includes(modelId) ? modelId : 'other';
      return countedModel(factory(modelId), { provider: name, model }, metrics);
    },
  };
}

/** Providers for the conventional variables that are set, named after their type, unless configured. */
function fromEnvironment(
  llm: LlmConfig,
  env: NodeJS.ProcessEnv,
): Record<string, LlmProviderConfig> {
  if (!llm.fromEnv) return {};
  const names = new Set(Object.keys(llm.providers));
  const found: Record<string, LlmProviderConfig> = {};
  const add = (type: LlmProviderType, present: boolean): void => {
    if (!present || names.has(type)) return;
    found[type] = {
      type,
      model: null,
      models: [],
      apiKeyEnv: null,
      apiKeyFile: null,
      baseUrl: null,
      api: 'responses',
      contextTokens: null,
    };
  };
  const set = (name: string): boolean => (env[name]?.trim() ?? '') !== '';
  add('anthropic', set('ANTHROPIC_API_KEY'));
  add('openai', set('OPENAI_API_KEY'));
  add('google', set('GOOGLE_GENERATIVE_AI_API_KEY'));
  add('ollama', set('OLLAMA_HOST'));
  return found;
}

export function createLlmProviders(
  llm: LlmConfig,
  env: NodeJS.ProcessEnv,
  metrics: Metrics = NO_METRICS,
): LlmProviders {
  const all = { ...llm.providers, ...fromEnvironment(llm, env) };
  const names = Object.keys(all);
  // A default that names nothing (default: openai without OPENAI_API_KEY) is refused on use,
  // with the reason, rather than stopping the server.
  const defaultName = llm.default ?? names[0] ?? null;
  const providers = new Map(
    names.map((name) => [
      name,
      providerFrom(name, all[name]!, env, llm, name === defaultName, metrics),
    ]),
  );
  const view = (p: LlmProvider): ProviderView => ({
    name: p.name,
    type: p.type,
    defaultModel: p.defaultModel,
    isDefault: p.isDefault,
  });
  return {
    list: () => [...providers.values()].map(view),
    get(name) {
      if (providers.size === 0) {
        throw new AppError(
          ErrorCodes.LLM_NOT_CONFIGURED,
          'No LLM provider is configured: add one under llm.providers, or set OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY or OLLAMA_HOST.',
          { category: 'config' },
        );
      }
      const wanted = name ?? defaultName!;
      const found = providers.get(wanted);
      if (!found && name == null) {
        throw new AppError(
          ErrorCodes.LLM_NOT_CONFIGURED,
          `llm.default names ${wanted}, which is not among the providers (${names.join(', ')}).`,
          { category: 'config' },
        );
      }
      if (!found) {
        throw new AppError(
          ErrorCodes.LLM_PROVIDER_UNKNOWN,
          `Unknown provider ${wanted}: the configured ones are ${names.join(', ')}.`,
          { category: 'input', details: { provider: wanted } },
        );
      }
      return found;
    },
    secrets() {
      const keys: string[] = [];
      for (const p of providers.values()) {
        try {
          const k = p.key();
          if (k) keys.push(k);
        } catch {
          // an unreadable key file holds nothing to hide
        }
      }
      return keys;
    },
  };
}
