// The names the stores accept: a PostgreSQL role for SET LOCAL ROLE must be a plain role name,
// never a word PostgreSQL reads specially there ('none' would reset to the login role).
import { describe, expect, it } from 'vitest';
import { assertPgRole } from './validate.js';

describe('assertPgRole', () => {
  it('keeps null and plain role names', () => {
    expect(assertPgRole(null)).toBeNull();
    expect(assertPgRole(undefined)).toBeNull();
    expect(assertPgRole(' reader ')).toBe('reader');
    expect(assertPgRole('app_reader$2')).toBe('app_reader$2');
  });

  it.each(['none', 'NONE', 'public', 'session_user', 'current_user', 'default'])(
    'refuses the special word %s',
    (word) => {
      expect(() => assertPgRole(word)).toThrow(/pg role/);
    },
  );

  it.each(['', ' ', 'a b', "x'; drop", '1abc', 'x'.repeat(64)])('refuses %j', (value) => {
    expect(() => assertPgRole(value)).toThrow(/pg role/);
  });
});
