// Retries with exponential backoff for the failures worth retrying (429, 5xx, a dropped
// connection). The wait is injectable so tests run without waiting.

export interface RetryOptions {
  retries: number;
  /** First wait; doubled after each failure, with up to 25 % jitter. */
  baseDelayMs: number;
  isRetryable: (error: unknown) => boolean;
  /** Seconds the server asked for (Retry-After), when it said. */
  retryAfterMs?: (error: unknown) => number | undefined;
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
}

const waitFor = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      },
      { once: true },
    );
  });

export async function withRetry<T>(work: () => Promise<T>, options: RetryOptions): Promise<T> {
  const wait = options.wait ?? waitFor;
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= options.retries || !options.isRetryable(error)) throw error;
      options.signal?.throwIfAborted();
      const backoff = options.baseDelayMs * 2 ** attempt * (1 + Math.random() * 0.25);
      const asked = options.retryAfterMs?.(error);
      await wait(Math.min(asked ?? backoff, 30_000), options.signal);
    }
  }
}
