// Which Node pgmcp runs on. Supported and tested: the LTS lines 22 and 24 (newer ones are
// expected to work). Node 20 is past its end of life and its dependencies are leaving it (the AI
// SDK declares Node >= 22); pgmcp still starts on it, with a warning at every start, until
// NODE20_LAST_DAY, and refuses after that day: an unmaintained runtime gets no security fixes,
// and the date is announced on every start for months before it comes (docs/adr/0006).
import { AppError, ErrorCodes } from '../core/errors.js';

/** The last day (UTC) pgmcp starts on Node 20. */
export const NODE20_LAST_DAY = '2027-03-31';
/** The code of the start-up warning on Node 20 (`node --disable-warning=PGMCP_NODE20` hides it). */
export const NODE20_WARNING_CODE = 'PGMCP_NODE20';

export type RuntimeVerdict =
  | { kind: 'supported' }
  | { kind: 'deprecated'; message: string }
  | { kind: 'unsupported'; message: string };

const UPGRADE = 'Install Node 22 or 24 (LTS) and run pgmcp with it.';

/** The verdict on Node `version` (process.versions.node) on `today`. */
export function runtimeVerdict(version: string, today: Date): RuntimeVerdict {
  const major = Number.parseInt(version, 10);
  if (major >= 22) return { kind: 'supported' };
  if (major === 20) {
    const day = today.toISOString().slice(0, 10);
    if (day <= NODE20_LAST_DAY) {
      return {
        kind: 'deprecated',
        message: `Node ${version} is past its end of life; pgmcp starts on Node 20 until ${NODE20_LAST_DAY} and refuses after that day. ${UPGRADE}`,
      };
    }
    return {
      kind: 'unsupported',
      message: `Node ${version} is no longer supported: pgmcp started on Node 20 until ${NODE20_LAST_DAY}. ${UPGRADE}`,
    };
  }
  return { kind: 'unsupported', message: `Node ${version} is not supported. ${UPGRADE}` };
}

/**
 * Start-up's check: a warning on stderr (a process warning, so Node's own switches silence it)
 * for a Node that is on its way out, an AppError for one pgmcp does not run on. Resolves once
 * the warning is written (Node writes it on the next tick; `--version` exits before that).
 */
export async function checkRuntime(
  version = process.versions.node,
  today = new Date(),
): Promise<void> {
  const verdict = runtimeVerdict(version, today);
  if (verdict.kind === 'unsupported') {
    throw new AppError(ErrorCodes.RUNTIME_UNSUPPORTED, verdict.message, { category: 'config' });
  }
  if (verdict.kind === 'deprecated') {
    process.emitWarning(verdict.message, {
      type: 'UnsupportedRuntimeWarning',
      code: NODE20_WARNING_CODE,
    });
    await new Promise((resolve) => setImmediate(resolve));
  }
}
