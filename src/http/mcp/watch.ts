// An SSE response is watched with the credential it was opened with (stream-watch.ts): when that
// credential lapses, the stream's owner closes it. A response whose client is already gone is
// not watched at all, and every other one is unwatched however it ends — by stream.finished,
// which calls back even for a response that closed before it was asked, where a 'close'
// listener added too late would never fire and leave the watch (its timer and its re-checks)
// running for good.
import { finished } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LapseReason, StreamWatch } from '../stream-watch.js';

/** Run `onLapse` (once) if the credential this SSE response was opened with lapses. */
export function watchStream(
  streamWatch: StreamWatch | null,
  req: FastifyRequest,
  res: FastifyReply['raw'],
  onLapse: (reason: LapseReason) => void,
): void {
  if (!streamWatch || res.writableEnded || res.destroyed || res.closed) return;
  const credential = streamWatch.credentialOf(req);
  if (!credential) return;
  const unwatch = streamWatch.watch(credential, onLapse);
  finished(res, () => unwatch());
}
