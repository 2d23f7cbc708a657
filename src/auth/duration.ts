// Lifetimes written the way people type them: 90s, 30m, 12h, 30d, or never.
import { AppError, ErrorCodes } from '../core/errors.js';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };
// Far enough for any token; keeps the timestamp inside what PostgreSQL and Date both hold.
const MAX_SECONDS = 100 * 365 * 86_400;

/** Seconds, or null for `never`. Throws AUTH_INVALID_INPUT on anything else. */
export function parseLifetime(text: string): number | null {
  const value = text.trim().toLowerCase();
  if (value === 'never') return null;
  const match = /^(\d{1,9})([smhd])$/.exec(value);
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2]!]! : NaN;
  if (!(seconds > 0 && seconds <= MAX_SECONDS)) {
    throw new AppError(
      ErrorCodes.AUTH_INVALID_INPUT,
      `expected a lifetime such as 90s, 30m, 12h, 30d or never, got ${JSON.stringify(text)}`,
      { category: 'input', details: { value: text } },
    );
  }
  return seconds;
}
