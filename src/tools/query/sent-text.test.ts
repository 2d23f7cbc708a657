import { describe, expect, it } from 'vitest';
import { callerPosition, characters, positionInQuery, type Replacement } from './sent-text.js';

// The caller wrote `SELECT x FROM pg_class WHERE y` (pg_class at 14..22); it was sent as
// `SELECT x FROM (SELECT …) AS "pg_class" WHERE y`, the subquery 40 characters long.
const replaced: Replacement[] = [{ start: 14, end: 22, length: 40 }];

describe('positions in the text sent, counted in the caller’s', () => {
  it('keeps positions before a replacement and shifts those after it', () => {
    expect(callerPosition(8, replaced)).toBe(8);
    expect(callerPosition(14, replaced)).toBe(14);
    // `WHERE` right after the subquery: 15 + 40 + 1 sent, 15 + 8 + 1 written.
    expect(callerPosition(56, replaced)).toBe(24);
    expect(callerPosition(62, replaced)).toBe(30);
  });

  it('points a position inside an inserted text at the start of what it replaced', () => {
    for (const inside of [15, 30, 54]) expect(callerPosition(inside, replaced)).toBe(15);
  });

  it('adds up several replacements, shorter and longer than what they replaced', () => {
    const several: Replacement[] = [
      { start: 5, end: 10, length: 2 },
      { start: 20, end: 23, length: 13 },
    ];
    expect(callerPosition(4, several)).toBe(4);
    expect(callerPosition(6, several)).toBe(6); // inside the first: where it starts
    expect(callerPosition(7, several)).toBe(6);
    expect(callerPosition(8, several)).toBe(11); // 3 characters fewer sent than written
    expect(callerPosition(17, several)).toBe(20);
    expect(callerPosition(18, several)).toBe(21); // inside the second
    expect(callerPosition(30, several)).toBe(21);
    expect(callerPosition(31, several)).toBe(24); // 7 characters more sent than written
  });

  it('counts characters, not UTF-16 units or bytes', () => {
    expect(characters('é😀a')).toBe(3);
  });

  it('rewrites a driver error’s position past a prefix, and drops one inside the prefix', () => {
    const error = { position: String(10 + 56) };
    positionInQuery(error, 10, replaced);
    expect(error.position).toBe('24');
    const early = { position: '3' };
    positionInQuery(early, 10, replaced);
    expect(early).toEqual({});
    const none = new Error('no position');
    expect(positionInQuery(none, 10)).toBe(none);
  });
});
