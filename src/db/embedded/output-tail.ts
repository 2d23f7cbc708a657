// Splits a child's output into lines, forwards each to a sink and keeps the last few, so a
// start failure can say what the child printed without ever echoing it to our stdout.

export interface OutputTail {
  /** Feed a chunk of one stream; partial lines wait for the rest. */
  write(stream: 'stdout' | 'stderr', chunk: Buffer | string): void;
  /** Emit whatever partial lines remain (call when the streams close). */
  flush(): void;
  /** The most recent lines, oldest first, each prefixed with its stream name. */
  lines(): string[];
}

const MAX_LINE_CHARS = 500;

export function createOutputTail(
  capacity: number,
  sink: (stream: 'stdout' | 'stderr', line: string) => void,
): OutputTail {
  const kept: string[] = [];
  const partial = { stdout: '', stderr: '' };

  const emit = (stream: 'stdout' | 'stderr', raw: string): void => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const clipped = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
    sink(stream, clipped);
    kept.push(`${stream}: ${clipped}`);
    if (kept.length > capacity) kept.shift();
  };

  return {
    write(stream, chunk) {
      const text = partial[stream] + chunk.toString();
      const parts = text.split('\n');
      partial[stream] = parts.pop() ?? '';
      // A child that never prints a newline must not grow this buffer without bound.
      if (partial[stream].length > MAX_LINE_CHARS * 4) {
        parts.push(partial[stream]);
        partial[stream] = '';
      }
      for (const part of parts) emit(stream, part);
    },
    flush() {
      for (const stream of ['stdout', 'stderr'] as const) {
        if (partial[stream] !== '') emit(stream, partial[stream]);
        partial[stream] = '';
      }
    },
    lines() {
      return [...kept];
    },
  };
}
