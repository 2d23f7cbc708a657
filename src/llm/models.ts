// The models a provider offers: from its own API where it has a listing (OpenAI and compatible
// servers, Anthropic, Gemini, Ollama), plus the configured ones; the configured list (and the
// default model) alone when the listing cannot be had.
import { AppError, ErrorCodes } from '../core/errors.js';
import { scrubSecrets } from './errors.js';
import type { LlmProvider } from './providers.js';

export interface ModelView {
  name: string;
  /** Where the entry came from. */
  source: 'provider' | 'config';
}

const LIST_TIMEOUT_MS = 10_000;

interface Listing {
  url: string;
  headers: Record<string, string>;
  names(body: unknown): string[];
}

type Json = Record<string, unknown>;
const items = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

function listingFor(provider: LlmProvider, key: string | null): Listing | null {
  const base = provider.baseUrl;
  switch (provider.type) {
    case 'openai':
    case 'openaiCompatible':
      return {
        url: `${base}/models`,
        headers: key ? { authorization: `Bearer ${key}` } : {},
        names: (body) => items((body as Json)['data']).map((m) => String(m['id'])),
      };
    case 'anthropic':
      return {
        url: `${base}/models?limit=1000`,
        headers: { ...(key ? { 'x-api-key': key } : {}), 'anthropic-version': '2023-06-01' },
        names: (body) => items((body as Json)['data']).map((m) => String(m['id'])),
      };
    case 'google':
      return {
        url: `${base}/models?pageSize=1000`,
        headers: key ? { 'x-goog-api-key': key } : {},
        names: (body) =>
          items((body as Json)['models'])
            .filter((m) => {
              const methods = m['supportedGenerationMethods'];
              return !Array.isArray(methods) || methods.includes('generateContent');
            })
            .map((m) => String(m['name']).replace(/^models\//, '')),
      };
    case 'ollama':
      return {
        url: `${base}/api/tags`,
        headers: key ? { authorization: `Bearer ${key}` } : {},
        names: (body) => items((body as Json)['models']).map((m) => String(m['name'])),
      };
  }
}

/** The provider's models; throws LLM_PROVIDER_FAILED when its listing fails and none are configured. */
export async function listModels(
  provider: LlmProvider,
  secrets: readonly string[],
  signal?: AbortSignal,
): Promise<ModelView[]> {
  const configured = [provider.defaultModel, ...provider.configuredModels].filter(Boolean);
  const listing = listingFor(provider, provider.key());
  let listed: string[] = [];
  let failure: string | null = null;
  if (listing) {
    try {
      const response = await fetch(listing.url, {
        headers: listing.headers,
        signal: AbortSignal.any([
          AbortSignal.timeout(LIST_TIMEOUT_MS),
          ...(signal ? [signal] : []),
        ]),
      });
      if (!response.ok) failure = `answered ${response.status}`;
      else listed = listing.names(await response.json());
    } catch (error) {
      failure = `could not be reached (${error instanceof Error ? error.message : String(error)})`;
    }
  }
  const seen = new Set<string>();
  const out: ModelView[] = [];
  for (const name of listed) {
    if (!seen.has(name)) out.push({ name, source: 'provider' });
    seen.add(name);
  }
  for (const name of configured) {
    if (!seen.has(name)) out.push({ name, source: 'config' });
    seen.add(name);
  }
  if (listed.length === 0 && failure !== null && provider.configuredModels.length === 0) {
    throw new AppError(
      ErrorCodes.LLM_PROVIDER_FAILED,
      scrubSecrets(
        `The model provider ${provider.name} ${failure} when asked for its models; configure llm.providers.${provider.name}.models to list them without it.`,
        secrets,
      ),
      { category: 'unavailable', details: { provider: provider.name } },
    );
  }
  return out;
}
