// A spinner on stderr while the model or a query works. It draws only on a terminal and always
// clears its line before anything else is written, so answers on stdout are never mixed with it.

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const INTERVAL_MS = 90;

export interface Spinner {
  /** Show (or relabel) the spinner. */
  start(label: string): void;
  /** Remove it from the screen (start() brings it back). */
  stop(): void;
  readonly active: boolean;
}

export function createSpinner(stream: NodeJS.WriteStream, enabled: boolean): Spinner {
  let timer: NodeJS.Timeout | null = null;
  let frame = 0;
  let label = '';
  let drawn = false;
  const draw = (): void => {
    stream.write(`\r\u001b[2K${FRAMES[frame % FRAMES.length]} ${label}`);
    frame++;
    drawn = true;
  };
  return {
    get active() {
      return timer !== null;
    },
    start(next) {
      if (!enabled) return;
      label = next;
      if (timer === null) {
        timer = setInterval(draw, INTERVAL_MS);
        timer.unref();
      }
      draw();
    },
    stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      if (drawn) stream.write('\r\u001b[2K');
      drawn = false;
    },
  };
}
