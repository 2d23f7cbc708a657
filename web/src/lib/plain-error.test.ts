import { describe, expect, it } from 'vitest';
import { ApiFailure, describeError, failureOf } from './plain-error';

describe('plain errors', () => {
  it('keeps the server message for a refused statement, says what to do for 401 and 429', async () => {
    const refused = await failureOf(
      new Response(JSON.stringify({ error: 'Writes are not allowed on database demo.' }), {
        status: 400,
      }),
    );
    expect(refused.message).toBe('Writes are not allowed on database demo.');
    const limited = await failureOf(
      new Response('{"error":"Rate limit exceeded"}', { status: 429 }),
    );
    expect(limited.message).toMatch(/Too many requests.*Wait a moment/);
    const expired = await failureOf(new Response('{"error":"invalid token"}', { status: 401 }));
    expect(expired.message).toMatch(/Sign in again/);
  });

  it('explains a database that is down or a timeout without a server message', async () => {
    expect(
      (await failureOf(new Response('<html>bad gateway</html>', { status: 503 }))).message,
    ).toMatch(/database .* unavailable/);
    expect((await failureOf(new Response('', { status: 504 }))).message).toMatch(/took too long/);
  });

  it('turns stream errors and network failures into sentences', () => {
    expect(describeError(new Error('{"error":"no provider configured"}'))).toBe(
      'no provider configured',
    );
    expect(describeError(new Error('The statement timed out after 30s.'))).toBe(
      'The statement timed out after 30s.',
    );
    expect(describeError(new TypeError('Failed to fetch'))).toMatch(
      /Cannot reach the pgmcp server/,
    );
    expect(describeError(new ApiFailure(403, 'Access denied to database x'))).toBe(
      'Access denied to database x',
    );
  });
});
