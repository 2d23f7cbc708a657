// The HTTP server's drain on SIGTERM: calls in flight and tasks running here get
// server.shutdownTimeoutMs; then the calls are cancelled and the tasks left are stopped.
import type { Logger } from 'pino';
import type { Drain } from '../http/drain.js';
import type { App } from './app.js';

export async function drainHttp(
  drain: Drain,
  app: App,
  timeoutMs: number,
  logger: Logger,
): Promise<void> {
  drain.start();
  app.shutdown.abort();
  // Tasks running here get the same time; those left are failed ("the server shut down").
  const tasksDrained = app.tasks.drain(timeoutMs);
  const wait = (ms: number): Promise<boolean> =>
    Promise.race([
      drain.idle().then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
    ]);
  if (await wait(timeoutMs)) return tasksDrained;
  logger.warn(
    { inFlight: drain.inFlight, shutdownTimeoutMs: timeoutMs },
    'calls still running at server.shutdownTimeoutMs: cancelling them',
  );
  // Tasks still running are stopped first (at once), so they end "the server shut down" rather
  // than with the cancelled call's error.
  const tasksStopped = app.tasks.drain(0);
  app.stopCalls.abort(new Error('the server is shutting down'));
  await wait(CANCEL_SETTLE_MS);
  await Promise.all([tasksDrained, tasksStopped]);
}
/** How long cancelled calls get to send their answers before the server closes. */
const CANCEL_SETTLE_MS = 3_000;
