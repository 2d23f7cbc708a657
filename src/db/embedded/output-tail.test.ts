import { describe, expect, it } from 'vitest';
import { createOutputTail } from './output-tail.js';

describe('createOutputTail', () => {
  it('joins lines split across chunks and keeps streams apart', () => {
    const seen: string[] = [];
    const tail = createOutputTail(10, (stream, line) => seen.push(`${stream}:${line}`));
    tail.write('stdout', 'hel');
    tail.write('stderr', 'oops\r\n');
    tail.write('stdout', 'lo\nwor');
    tail.write('stdout', Buffer.from('ld\n\n'));
    expect(seen).toEqual(['stderr:oops', 'stdout:hello', 'stdout:world']);
  });

  it('keeps only the last lines and flushes a trailing partial line', () => {
    const tail = createOutputTail(2, () => undefined);
    tail.write('stderr', 'one\ntwo\nthree\nfour');
    expect(tail.lines()).toEqual(['stderr: two', 'stderr: three']);
    tail.flush();
    expect(tail.lines()).toEqual(['stderr: three', 'stderr: four']);
  });

  it('clips very long lines and never buffers without bound', () => {
    const seen: string[] = [];
    const tail = createOutputTail(5, (_stream, line) => seen.push(line));
    tail.write('stdout', 'x'.repeat(5000));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.length).toBeLessThanOrEqual(501);
  });
});
