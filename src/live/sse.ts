import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { StreamTransport } from "./session.js";
import type { LiveEvent } from "./types.js";

/** Frames by event: every subscriber of a topic receives the same event object, so it is serialised once. */
const frames = new WeakMap<LiveEvent, string>();

/** One event in the `text/event-stream` wire format (JSON data on one line), built once per event. */
export function formatSse(e: LiveEvent): string {
  let f = frames.get(e);
  if (f === undefined) frames.set(e, (f = `event: ${e.event}\n${e.id ? `id: ${e.id}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`));
  return f;
}

/** HTTP/1.1 chunks by event (`<size in hex>\r\n<frame>\r\n`), built once per event like the frames. */
const chunks = new WeakMap<LiveEvent, string>();

/** {@link formatSse} as one HTTP/1.1 chunk of a `Transfer-Encoding: chunked` body, built once per event. */
export function sseChunk(e: LiveEvent): string {
  let c = chunks.get(e);
  if (c === undefined) chunks.set(e, (c = httpChunk(formatSse(e))));
  return c;
}

const httpChunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const HEARTBEAT_CHUNK = httpChunk(": hb\n\n");
const uncork = (t: SseTransport) => t.uncork();

/** `JSON.stringify(e.data)`, once per event (the WebSocket frames wrap it per subscription). */
const dataJson = new WeakMap<LiveEvent, string>();
export function eventDataJson(e: LiveEvent): string {
  let j = dataJson.get(e);
  if (j === undefined) dataJson.set(e, (j = JSON.stringify(e.data)));
  return j;
}

/**
 * A Server-Sent Events response as a stream transport: writes events, refuses (the subscriber is
 * dropped) once more than `budgetBytes` are queued unread in user space, and sends a `: hb` comment every
 * `heartbeatMs` so proxies keep the connection open. Headers: `text/event-stream`, `no-cache,
 * no-transform`, `X-Accel-Buffering: no`, and `retry: 3000` first.
 *
 * Once the headers are out, events of a chunked (HTTP/1.1) response are written to its socket as
 * ready-made chunks ({@link sseChunk}) rather than through `res.write`: express gives every response its
 * own prototype, which makes each `res.write` several times slower in V8 (measured 4.6 against 0.6 µs
 * per write), and one event is written once per subscriber. `res.end()` still ends the body (it writes
 * the last chunk), so the connection is reused or closed as node decides. An HTTP/1.0 response (not
 * chunked) keeps `res.write`.
 */
export class SseTransport implements StreamTransport {
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;
  /** The socket written to directly (chunked responses), else undefined (`res.write`). */
  private readonly socket: Socket | undefined;
  private corked = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly budgetBytes: number,
    heartbeatMs: number,
    extraHeaders: Record<string, string> = {},
  ) {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
      ...extraHeaders,
    });
    res.write("retry: 3000\n\n");
    // After this first write the head and the first chunk are in the socket's queue, in order.
    this.socket = res.chunkedEncoding && res.socket ? res.socket : undefined;
    this.heartbeat = setInterval(() => {
      if (this.queued() <= budgetBytes) this.write(HEARTBEAT_CHUNK, ": hb\n\n");
    }, heartbeatMs);
    this.heartbeat.unref();
    res.on("close", () => this.dispose());
  }

  send(e: LiveEvent, replay = false): boolean {
    if (this.closed) return false;
    if (!replay && this.queued() > this.budgetBytes) return false;
    if (this.socket) this.writeChunk(sseChunk(e));
    else this.res.write(formatSse(e));
    return true;
  }

  end(last?: LiveEvent): void {
    if (this.closed) return;
    // The last event goes out even from a full buffer: it is small, and it says why the stream ended.
    if (last) this.send(last, true);
    this.dispose();
    this.res.end();
    // A subscriber that stopped reading would hold the unread bytes for as long as it keeps the socket.
    if (this.queued() > 0) setTimeout(() => this.res.destroy(), 2000).unref();
  }

  /** Bytes written and not yet taken by the kernel. */
  private queued(): number {
    return this.socket ? this.socket.writableLength : this.res.writableLength;
  }

  private write(chunk: string, text: string): void {
    if (this.socket) this.writeChunk(chunk);
    else this.res.write(text);
  }

  /**
   * Writes to the socket corked until the next tick, as `res.write` does: the events of one tick leave in
   * one system call, and until then they count as unread bytes against the budget.
   */
  private writeChunk(chunk: string): void {
    const socket = this.socket!;
    if (!this.corked) {
      this.corked = true;
      socket.cork();
      process.nextTick(uncork, this);
    }
    socket.write(chunk);
  }

  /** @internal the next-tick end of {@link writeChunk}'s cork. */
  uncork(): void {
    this.corked = false;
    this.socket!.uncork();
  }

  private dispose(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
  }
}
