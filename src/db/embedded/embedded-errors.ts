// The errors the embedded database reports. Messages name the directory and say what to do;
// they quote only what the child printed, which never includes connection secrets.

import { AppError, ErrorCodes } from '../../core/errors.js';
import { ChildExitedError } from './child.js';
import { StartTimeoutError } from './readiness.js';

export function startFailedError(dataDir: string, lastOutput: string[], cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  const why =
    cause instanceof StartTimeoutError
      ? cause.message
      : cause instanceof ChildExitedError
        ? `the database process ${cause.message}`
        : `the database could not be reached (${cause instanceof Error ? cause.message : String(cause)})`;
  return new AppError(
    ErrorCodes.EMBEDDED_START_FAILED,
    `The embedded database in ${dataDir} did not start: ${why}.` +
      (lastOutput.length > 0
        ? ` Last output of the database process:\n${lastOutput.join('\n')}`
        : ''),
    { category: 'unavailable', cause, details: { dataDir, lastOutput } },
  );
}

export function crashLoopError(dataDir: string): AppError {
  return new AppError(
    ErrorCodes.EMBEDDED_START_FAILED,
    `The embedded database in ${dataDir} keeps crashing; automatic restarts stopped. ` +
      'Restart pgmcp, and check the debug log for the database process output.',
    { category: 'unavailable', details: { dataDir } },
  );
}

export function unusableDirectoryError(dataDir: string, cause: unknown): AppError {
  const reason = (cause as NodeJS.ErrnoException).code ?? (cause as Error).message;
  return new AppError(
    ErrorCodes.EMBEDDED_START_FAILED,
    `The embedded database directory ${dataDir} cannot be used (${reason}). ` +
      'Check its permissions, or start pgmcp with --data-dir pointing to a writable directory.',
    { category: 'unavailable', cause, details: { dataDir } },
  );
}

export function stoppedError(): AppError {
  return new AppError(ErrorCodes.DB_UNAVAILABLE, 'The embedded database has been stopped.', {
    category: 'unavailable',
  });
}
