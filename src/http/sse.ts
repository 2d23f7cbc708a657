// Server-sent events for MCP: logical streams that outlive one TCP connection (legacy
// resumability with Last-Event-ID), backed by a bounded per-session event store.
import type { ServerResponse } from 'node:http';
import { serialize } from '../mcp/serialize.js';

export interface StoredEvent {
  streamId: string;
  seq: number;
  data: string;
}

/** Where a session's events are also kept, for a resumption on another instance. */
export interface EventMirror {
  add(event: StoredEvent): void;
  /** The stream ended: nothing more will come. */
  finish(streamId: string): void;
}

/** Bounded ring of recent events of one session, for replay after a reconnect. */
export class EventStore {
  private readonly events: StoredEvent[] = [];
  private bytes = 0;
  constructor(
    private readonly capacity: number,
    /** Tool results can be large: the store is bounded in bytes as well as in events. */
    private readonly maxBytes = 8 * 1024 * 1024,
    private readonly mirror: EventMirror | null = null,
  ) {}

  add(event: StoredEvent): void {
    this.mirror?.add(event);
    this.events.push(event);
    this.bytes += event.data.length;
    while (
      this.events.length > this.capacity ||
      (this.bytes > this.maxBytes && this.events.length > 1)
    ) {
      this.bytes -= this.events.shift()!.data.length;
    }
  }

  finish(streamId: string): void {
    this.mirror?.finish(streamId);
  }

  after(streamId: string, seq: number): StoredEvent[] {
    return this.events.filter((e) => e.streamId === streamId && e.seq > seq);
  }
}

export function parseEventId(id: string): { streamId: string; seq: number } | null {
  const at = id.lastIndexOf('_');
  if (at <= 0) return null;
  const seq = Number(id.slice(at + 1));
  return Number.isInteger(seq) && seq >= 0 ? { streamId: id.slice(0, at), seq } : null;
}

let openStreams = 0;

/** SSE streams open in this process now (the metrics' gauge). */
export function openSseStreams(): number {
  return openStreams;
}

export function startSse(res: ServerResponse, extraHeaders: Record<string, string> = {}): void {
  openStreams++;
  res.once('close', () => openStreams--);
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...extraHeaders,
  });
  res.flushHeaders();
}

/**
 * One logical stream. With a store, every event gets an id `<streamId>_<seq>` and is kept
 * for replay; the connection writing it may change (attach) after a reconnect.
 */
export class SseStream {
  private seq = 0;
  private writer: ServerResponse | null = null;
  private keepAlive: NodeJS.Timeout | null = null;
  finished = false;

  constructor(
    readonly id: string,
    private readonly store: EventStore | null,
    private readonly keepAliveMs: number,
  ) {}

  get connected(): boolean {
    return this.writer !== null && !this.writer.writableEnded && !this.writer.destroyed;
  }

  attach(res: ServerResponse): void {
    // A resumed stream moves to the new connection; the old one is closed, not left hanging.
    const previous = this.writer;
    this.detach();
    if (previous && previous !== res && !previous.writableEnded) previous.end();
    this.writer = res;
    res.on('close', () => {
      if (this.writer === res) this.detach();
    });
    if (this.keepAliveMs > 0) {
      this.keepAlive = setInterval(() => this.writeRaw(': keep-alive\n\n'), this.keepAliveMs);
      this.keepAlive.unref();
    }
  }

  detach(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
    this.writer = null;
  }

  /** A priming event (id, empty data) so the client can resume even before any message. */
  prime(retryMs?: number): void {
    if (!this.store) return;
    const seq = ++this.seq;
    this.store.add({ streamId: this.id, seq, data: '' });
    this.writeRaw(`id: ${this.id}_${seq}\n${retryMs ? `retry: ${retryMs}\n` : ''}data: \n\n`);
  }

  /** Tell the client how long to wait before reconnecting. */
  retry(ms: number): void {
    this.writeRaw(`retry: ${ms}\n\n`);
  }

  send(message: unknown): void {
    const data = serialize(message);
    if (this.store) {
      const seq = ++this.seq;
      this.store.add({ streamId: this.id, seq, data });
      this.writeRaw(`id: ${this.id}_${seq}\nevent: message\ndata: ${data}\n\n`);
    } else {
      this.writeRaw(`event: message\ndata: ${data}\n\n`);
    }
  }

  replay(events: StoredEvent[]): void {
    for (const e of events) {
      this.writeRaw(
        e.data === ''
          ? `id: ${e.streamId}_${e.seq}\ndata: \n\n`
          : `id: ${e.streamId}_${e.seq}\nevent: message\ndata: ${e.data}\n\n`,
      );
    }
  }

  /** End the current connection; with `finished` the logical stream is over too. */
  end(finished: boolean): void {
    if (finished && !this.finished) {
      this.finished = true;
      this.store?.finish(this.id);
    }
    const writer = this.writer;
    this.detach();
    if (writer && !writer.writableEnded) writer.end();
  }

  private writeRaw(chunk: string): void {
    const writer = this.writer;
    if (writer && !writer.writableEnded && !writer.destroyed) writer.write(chunk);
  }
}
