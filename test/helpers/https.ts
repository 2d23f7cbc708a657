// HTTPS for the TLS suites: a self-signed certificate made with openssl for the test, and a
// fetch that trusts that certificate alone (the SDK's transports take a custom fetch).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';

export interface TestCertificate {
  dir: string;
  certPath: string;
  keyPath: string;
  cert: Buffer;
}

/** An EC P-256 certificate for 127.0.0.1 and localhost, valid for a day. */
export function makeCertificate(dir = mkdtempSync(join(tmpdir(), 'pgmcp-tls-'))): TestCertificate {
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  return { dir, certPath, keyPath, cert: readFileSync(certPath) };
}

/** A fetch over node:https whose only trusted CA is `ca`. Bodies stream (SSE works). */
export function fetchTrusting(ca: Buffer) {
  return (input: string | URL, init: RequestInit = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const headers = new Headers(init.headers);
      const body =
        init.body === undefined || init.body === null ? undefined : String(init.body as string);
      if (body !== undefined) headers.set('content-length', String(Buffer.byteLength(body)));
      const req = request(
        input,
        { method: init.method ?? 'GET', headers: Object.fromEntries(headers), ca },
        (res) => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const item of Array.isArray(value) ? value : [value]) {
              responseHeaders.append(name, item);
            }
          }
          const status = res.statusCode ?? 0;
          const stream =
            status === 204 || status === 205 || status === 304 || init.method === 'HEAD'
              ? null
              : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          resolve(new Response(stream, { status, headers: responseHeaders }));
        },
      );
      req.on('error', reject);
      init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
      req.end(body);
    });
}
