// An SSE response is watched with the credential it was opened with (stream-watch.ts): when that
// credential lapses, the stream's owner closes it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LapseReason, StreamWatch } from '../stream-watch.js';

/** Run `onLapse` (once) if the credential this SSE response was opened with lapses. */
export function watchStream(
  streamWatch: StreamWatch | null,
  req: FastifyRequest,
  res: FastifyReply['raw'],
  onLapse: (reason: LapseReason) => void,
): void {
  const credential = streamWatch?.credentialOf(req);
  if (!streamWatch || !credential || res.writableEnded) return;
  const unwatch = streamWatch.watch(credential, onLapse);
  res.once('close', unwatch);
}
