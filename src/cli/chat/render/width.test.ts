import { describe, expect, it } from 'vitest';
import { displayWidth, padEnd, truncate, wrap } from './width.js';

describe('terminal width', () => {
  it('counts emoji, flags and joined sequences as two cells, marks as none', () => {
    expect(displayWidth('🚀')).toBe(2);
    expect(displayWidth('🇫🇷')).toBe(2);
    expect(displayWidth('👩‍👩‍👧')).toBe(2);
    expect(displayWidth('👍🏽')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('日本')).toBe(4);
    expect(displayWidth('\u001b[31mred\u001b[0m')).toBe(3);
  });

  it('never cuts inside a grapheme cluster, and keeps to the width', () => {
    const text = 'launch 🚀🚀 👩‍👩‍👧 done';
    for (let width = 1; width <= displayWidth(text); width++) {
      const cut = truncate(text, width);
      expect(displayWidth(cut)).toBeLessThanOrEqual(width);
      expect(cut.includes('\u200d') ? cut.includes('👩‍👩‍👧') : true).toBe(true);
    }
    expect(truncate('🚀🚀🚀', 4)).toBe('🚀…');
  });

  it('pads and wraps by cells', () => {
    expect(padEnd('🚀', 4)).toBe('🚀  ');
    expect(wrap('🚀🚀🚀🚀', 5)).toEqual(['🚀🚀', '🚀🚀']);
  });
});
