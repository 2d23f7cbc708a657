import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { acceptanceOf } from './accept.js';

const request = (accept: string | undefined): FastifyRequest =>
  ({ headers: accept === undefined ? {} : { accept } }) as unknown as FastifyRequest;

describe('acceptanceOf (the verdict of the last Accept header is reused)', () => {
  it('gives each header its own verdict, also when headers alternate', () => {
    const both = 'application/json, text/event-stream';
    for (let round = 0; round < 2; round++) {
      expect(acceptanceOf(request(both))).toEqual({ json: true, sse: true });
      expect(acceptanceOf(request('text/event-stream'))).toEqual({ json: false, sse: true });
      expect(acceptanceOf(request(undefined))).toEqual({ json: true, sse: false });
      expect(acceptanceOf(request('application/*;q=0.5'))).toEqual({ json: true, sse: false });
      expect(acceptanceOf(request('text/html'))).toEqual({ json: false, sse: false });
      expect(acceptanceOf(request('text/html'))).toEqual({ json: false, sse: false });
      expect(acceptanceOf(request('*/*'))).toEqual({ json: true, sse: true });
    }
  });

  it('hands out a verdict no caller can change for the next request', () => {
    const first = acceptanceOf(request('application/json'));
    expect(Object.isFrozen(first)).toBe(true);
    expect(acceptanceOf(request('application/json'))).toBe(first);
  });
});
