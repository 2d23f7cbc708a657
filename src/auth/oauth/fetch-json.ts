// Every document pgmcp fetches for OAuth (issuer metadata, key sets, client metadata documents,
// introspection answers) comes through here: a time limit on the whole exchange, a byte limit
// on the body read as it arrives, no redirects followed, JSON objects only, and only to
// addresses the fetch policy allows (fetch-guard.ts). A slow or hostile server costs one
// bounded wait, never a hung request or an unbounded buffer, and a URL cannot make pgmcp reach
// into its own network. node:http with a lookup of our own, not fetch: the name is resolved
// once, every address it gives is checked, and the socket connects to the address checked.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { hostOf, type FetchPolicy } from './fetch-guard.js';

export class FetchProblem extends Error {
  constructor(
    message: string,
    /**
     * 'unreachable': network, timeout or 5xx; 'refused': the server answered, but not usably;
     * 'forbidden': the URL is on an address pgmcp does not fetch from (fetch-guard.ts).
     */
    readonly kind: 'unreachable' | 'refused' | 'forbidden',
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
  /** Which addresses may be fetched from (createFetchPolicy). */
  policy: FetchPolicy;
}

/**
 * Why a fetch is refused before any connection: said the same way for every caller. The message
 * names the kind of address, for the server's log; what a client is told says less (clients.ts).
 */
function forbidden(range: string): FetchProblem {
  return new FetchProblem(
    `is on a ${range} address, which pgmcp does not fetch from unless auth.oauth.allowedFetchHosts lists its host`,
    'forbidden',
  );
}

/** dns.lookup, refusing the whole name when any address it resolves to is not allowed. */
function guardedLookup(
  policy: FetchPolicy,
  target: URL,
  onRefused: (range: string) => void,
): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      for (const { address } of list) {
        const range = policy.refusal(target, address);
        if (range !== null) {
          onRefused(range);
          const refusal = Object.assign(new Error(`${hostname} resolves to a ${range} address`), {
            code: 'EPGMCPFORBIDDEN',
          });
          return callback(refusal, '', 0);
        }
      }
      if (list.length === 0) return callback(new Error(`${hostname} has no address`), '', 0);
      if (options.all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

export async function fetchJson(
  url: string,
  options: FetchJsonOptions,
): Promise<Record<string, unknown>> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new FetchProblem('is not a URL', 'refused');
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    throw new FetchProblem('is not an http(s) URL', 'refused');
  }
  const host = hostOf(target.hostname);
  if (isIP(host)) {
    const range = options.policy.refusal(target, host);
    if (range !== null) throw forbidden(range);
  }
  let refusedRange: string | null = null;
  const signal = AbortSignal.timeout(options.timeoutMs);
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const request: RequestOptions = {
    method: options.method ?? 'GET',
    // A socket of its own each time: a pooled one may have been opened under another policy.
    agent: false,
    lookup: guardedLookup(options.policy, target, (range) => {
      refusedRange = range;
    }),
    signal,
    headers: {
      accept: 'application/json',
      ...(body ? { 'content-length': String(body.length) } : {}),
      ...options.headers,
    },
  };
  let response: IncomingMessage;
  try {
    response = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(target, request, resolve);
      req.on('error', reject);
      req.end(body);
    });
  } catch (error) {
    if (refusedRange !== null) throw forbidden(refusedRange);
    const timedOut = (error as Error).name === 'AbortError' || signal.aborted;
    throw new FetchProblem(
      timedOut ? `no answer within ${options.timeoutMs} ms` : 'connection failed',
      'unreachable',
    );
  }
  const status = response.statusCode ?? 0;
  const ok = options.okStatuses ?? [200];
  if (!ok.includes(status)) {
    response.destroy();
    if (status >= 300 && status < 400) {
      // Never followed: the next hop could be anywhere, and is not checked.
      throw new FetchProblem(
        `answered with a redirect (HTTP ${status}), which pgmcp does not follow`,
        'refused',
      );
    }
    throw new FetchProblem(`answered HTTP ${status}`, status >= 500 ? 'unreachable' : 'refused');
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
  response: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<string> {
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw new FetchProblem(`answered more than ${maxBytes} bytes`, 'refused');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response) {
      const piece = chunk as Buffer;
      size += piece.byteLength;
      if (size > maxBytes) {
        response.destroy();
        throw new FetchProblem(`answered more than ${maxBytes} bytes`, 'refused');
      }
      chunks.push(piece);
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
