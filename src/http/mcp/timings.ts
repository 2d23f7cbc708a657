// Stage timings a handler reports (RequestChannel.timing), as a Server-Timing header value.
export interface ServerTimings {
  add(stage: string, durationMs: number): void;
  /** The Server-Timing header value (`parse;dur=0.41, run;dur=1.90`); '' when nothing was timed. */
  readonly header: string;
}

export function serverTimings(): ServerTimings {
  const parts: string[] = [];
  return {
    add(stage, durationMs) {
      if (/^[A-Za-z0-9_-]+$/.test(stage)) parts.push(`${stage};dur=${durationMs.toFixed(2)}`);
    },
    get header() {
      return parts.join(', ');
    },
  };
}
