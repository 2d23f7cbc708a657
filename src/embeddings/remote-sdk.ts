// The AI SDK's embedding models, in a module of their own so that remote.ts loads them with
// the first batch it embeds, never at start.
import { createGoogle } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOllama } from 'ollama-ai-provider-v2';
import { createVoyage } from 'voyage-ai-provider';
import type { RemoteKind } from './remote.js';

export { APICallError, embedMany } from 'ai';

export function buildModel(
  kind: RemoteKind,
  baseURL: string,
  apiKey: string | undefined,
  model: string,
) {
  switch (kind) {
    case 'openai':
    case 'openaiCompatible':
      // An OpenAI-compatible server may need no key; the SDK insists on one, so send a dummy.
      return createOpenAI({ baseURL, apiKey: apiKey ?? 'none', name: kind }).embedding(model);
    case 'voyage':
      return createVoyage({ baseURL, apiKey: apiKey ?? '' }).textEmbeddingModel(model);
    case 'ollama':
      return createOllama({ baseURL }).embedding(model);
    case 'gemini':
      return createGoogle({ baseURL, apiKey: apiKey ?? '' }).embedding(model);
  }
}
