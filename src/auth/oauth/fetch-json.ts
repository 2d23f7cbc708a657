// Every document pgmcp fetches for OAuth (issuer metadata, key sets, client metadata documents,
// introspection answers) comes through here: a time limit on the whole exchange, a byte limit
// on the body read as it arrives, no redirects followed, JSON objects only. A slow or hostile
// server costs one bounded wait, never a hung request or an unbounded buffer.

export class FetchProblem extends Error {
  constructor(
    message: string,
    /** 'unreachable': network, timeout or 5xx; 'refused': the server answered, but not usably. */
    readonly kind: 'unreachable' | 'refused',
  ) {
    super(message);
    this.name = 'FetchProblem';
  }
}

export interface FetchJsonOptions {
  timeoutMs: number;
  maxBytes: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Statuses whose JSON body is still wanted (introspection and registration answer 200/201). */
  okStatuses?: readonly number[];
}

export async function fetchJson(
  url: string,
  options: FetchJsonOptions,
): Promise<Record<string, unknown>> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? 'GET',
      redirect: 'manual',
      signal,
      headers: { accept: 'application/json', ...options.headers },
      ...(options.body !== undefined ? { body: options.body } : {}),
    });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError' || signal.aborted;
    throw new FetchProblem(
      timedOut ? `no answer within ${options.timeoutMs} ms` : 'connection failed',
      'unreachable',
    );
  }
  const ok = options.okStatuses ?? [200];
  if (!ok.includes(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    throw new FetchProblem(
      `answered HTTP ${response.status}`,
      response.status >= 500 ? 'unreachable' : 'refused',
    );
  }
  const text = await readBounded(response, options.maxBytes, signal, options.timeoutMs);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new FetchProblem('answered something that is not JSON', 'refused');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new FetchProblem('answered JSON that is not an object', 'refused');
  }
  return parsed as Record<string, unknown>;
}

async function readBounded(
  response: Response,
  maxBytes: number,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new FetchProblem(`answered more than ${maxBytes} bytes`, 'refused');
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new FetchProblem(`answered more than ${maxBytes} bytes`, 'refused');
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof FetchProblem) throw error;
    throw new FetchProblem(
      signal.aborted ? `no answer within ${timeoutMs} ms` : 'connection broke',
      'unreachable',
    );
  }
  return Buffer.concat(chunks).toString('utf8');
}
