// A local OTLP/HTTP trace receiver: a node:http server on loopback that takes what an exporter
// posts to /v1/traces (OTLP's JSON encoding, which @opentelemetry/exporter-trace-otlp-http sends),
// decodes it and keeps the spans, flattened, for a test to look at.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean | null | AttributeValue[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  links: { traceId: string; spanId: string }[];
  /** The resource's attributes (service.name …). */
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (http://127.0.0.1:PORT). */
  readonly endpoint: string;
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** What the receiver could not decode (a content type other than JSON, bad JSON). */
  problems(): string[];
  /**
   * Waits until `found` returns something for the spans received, and returns it. Gives up
   * (throws, listing the span names received) after `limitMs`: a bound on the wait, not a check
   * of speed.
   */
  waitFor<T>(
    found: (spans: ReceivedSpan[]) => T | undefined | null | false,
    limitMs?: number,
  ): Promise<T>;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
}
interface KeyValue {
  key: string;
  value: AnyValue;
}

const decodeValue = (value: AnyValue | undefined): AttributeValue => {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(decodeValue);
  return null;
};

const decodeAttributes = (list: KeyValue[] | undefined): Record<string, AttributeValue> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, decodeValue(kv.value)]));

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: KeyValue[];
        status?: { code?: number };
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}

export function decodeExport(body: ExportRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = decodeAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind ?? 0,
          attributes: decodeAttributes(s.attributes),
          status: s.status?.code ?? 0,
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          resource,
        });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const problems: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        problems.push(`${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      if (!type.startsWith('application/json')) {
        problems.push(`content-type ${type}`);
        res.writeHead(415).end();
        return;
      }
      try {
        received.push(...decodeExport(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      } catch (error) {
        problems.push(`undecodable: ${(error as Error).message}`);
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    problems: () => [...problems],
    async waitFor(found, limitMs = 20_000) {
      const deadline = Date.now() + limitMs;
      for (;;) {
        const result = found([...received]);
        if (result !== undefined && result !== null && result !== false) return result;
        if (Date.now() > deadline) {
          throw new Error(
            `the spans looked for did not arrive; received: ${received.map((s) => s.name).join(', ') || 'none'}${problems.length ? `; problems: ${problems.join('; ')}` : ''}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
