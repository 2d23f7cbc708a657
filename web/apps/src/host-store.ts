// What the host has sent so far, for React to read (useSyncExternalStore): the handlers are set
// before the handshake, before anything renders.
import type { ToolCallOutcome } from './host-link';

export interface HostState {
  args: Record<string, unknown> | null;
  result: ToolCallOutcome | null;
  cancelled: string | null;
}

export function createHostStore() {
  let state: HostState = { args: null, result: null, cancelled: null };
  const listeners = new Set<() => void>();
  const set = (change: Partial<HostState>): void => {
    state = { ...state, ...change };
    for (const listener of listeners) listener();
  };
  return {
    get: (): HostState => state,
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    handlers: {
      onInput: (args: Record<string, unknown>) => set({ args }),
      onResult: (result: ToolCallOutcome) => set({ result }),
      onCancelled: (cancelled: string) => set({ cancelled }),
    },
  };
}
