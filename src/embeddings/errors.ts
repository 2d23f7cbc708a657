// The errors an embedding call can end in, each telling the caller what to do next.
import { AppError, ErrorCodes } from '../core/errors.js';

export function missingKey(provider: string, where: string): AppError {
  return new AppError(
    ErrorCodes.EMBEDDING_CONFIG,
    `The ${provider} embedding provider has no API key: set ${where}, or choose another provider (the offline one needs none).`,
    { category: 'config', details: { provider } },
  );
}

export function unknownProvider(name: string, known: readonly string[]): AppError {
  return new AppError(
    ErrorCodes.EMBEDDING_CONFIG,
    `Unknown embedding provider '${name}'. Configured providers: ${known.join(', ')}.`,
    { category: 'input', details: { provider: name } },
  );
}

export function providerUnreachable(provider: string, url: string, cause: unknown): AppError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new AppError(
    ErrorCodes.EMBEDDING_UNAVAILABLE,
    `The ${provider} embedding provider at ${url} could not be reached (${reason}). Check embeddings.${provider}.baseUrl and that the service is running.`,
    { category: 'unavailable', details: { provider }, cause },
  );
}

export function providerFailed(
  provider: string,
  status: number | undefined,
  message: string,
  cause?: unknown,
): AppError {
  const auth = status === 401 || status === 403;
  return new AppError(
    ErrorCodes.EMBEDDING_UNAVAILABLE,
    auth
      ? `The ${provider} embedding provider refused the API key (HTTP ${status}): ${message}`
      : `The ${provider} embedding provider failed${status !== undefined ? ` (HTTP ${status})` : ''}: ${message}`,
    {
      category: auth ? 'config' : 'unavailable',
      details: { provider, ...(status !== undefined ? { status } : {}) },
      cause,
    },
  );
}

export function unknownModel(provider: string, model: string, message: string): AppError {
  return new AppError(
    ErrorCodes.EMBEDDING_MODEL_UNKNOWN,
    `The ${provider} embedding provider has no model '${model}' (${message}). Set embeddings.${provider}.model to a model it serves.`,
    { category: 'config', details: { provider, model } },
  );
}

/** A call asked for a model the provider does not serve (the offline provider has only one). */
export function modelNotServed(
  provider: string,
  model: string,
  served: readonly string[],
): AppError {
  return new AppError(
    ErrorCodes.EMBEDDING_MODEL_UNKNOWN,
    `The ${provider} embedding provider has no model '${model}'; it serves ${served.join(', ')}. Leave model out to use the configured one.`,
    { category: 'input', details: { provider, model } },
  );
}

export function dimensionMismatch(
  got: number,
  expected: number,
  where: string,
  hint: string,
): AppError {
  return new AppError(
    ErrorCodes.EMBEDDING_DIMENSION_MISMATCH,
    `The embedding has ${got} dimensions but ${where} has ${expected}. ${hint}`,
    { category: 'input', details: { got, expected } },
  );
}
