// HTTPS: the certificate and key files read and checked before anything else starts, so a
// wrong path or a key of another certificate stops `pgmcp serve` with one clear sentence.
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { AppError, ErrorCodes } from '../core/errors.js';

export interface TlsFiles {
  cert: string | null;
  key: string | null;
}

/** PEM contents, ready for the HTTPS server. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

function tlsError(key: string, message: string, cause?: unknown): AppError {
  return new AppError(ErrorCodes.CONFIG_INVALID, `${key}: ${message}`, {
    category: 'config',
    details: { key },
    cause,
  });
}

function readPem(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : (code ?? 'unreadable');
    throw tlsError(key, `cannot read ${path}: ${why}`, error);
  }
}

/** null when TLS is off; throws CONFIG_INVALID (exit 2) naming the file at fault. */
export function loadTlsMaterial(files: TlsFiles): TlsMaterial | null {
  if (files.cert === null && files.key === null) return null;
  if (files.cert === null || files.key === null) {
    throw tlsError('http.tls', 'give both the certificate (--tls-cert) and the key (--tls-key)');
  }
  const cert = readPem('http.tls.cert', files.cert);
  const key = readPem('http.tls.key', files.key);
  if (!cert.includes('-----BEGIN CERTIFICATE-----')) {
    throw tlsError('http.tls.cert', `${files.cert} holds no PEM certificate`);
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key.toString('latin1'))) {
    throw tlsError('http.tls.key', `${files.key} holds no PEM private key`);
  }
  try {
    // Builds what the server will use: fails on a key that does not match the certificate.
    createSecureContext({ cert, key });
  } catch (error) {
    const reason = (error as Error).message;
    const mismatch = /mismatch/i.test(reason);
    throw tlsError(
      mismatch ? 'http.tls.key' : 'http.tls.cert',
      mismatch
        ? `${files.key} is not the private key of the certificate in ${files.cert}`
        : `cannot use ${files.cert} with ${files.key}: ${reason}`,
      error,
    );
  }
  return { cert, key };
}

/**
 * Fastify options for HTTPS: none without TLS material, else the `https` object that the HTTP
 * server's own options (its timeouts) are added to. The request and reply API is the same over
 * TLS, and the rest of the code keeps one FastifyInstance type.
 */
export function httpsOptions(
  material: TlsMaterial | null,
): Record<never, never> | { https: { cert: Buffer; key: Buffer } } {
  return material === null ? {} : { https: { cert: material.cert, key: material.key } };
}
