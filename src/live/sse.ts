import type { ServerResponse } from "node:http";
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

/** `JSON.stringify(e.data)`, once per event (the WebSocket frames wrap it per subscription). */
const dataJson = new WeakMap<LiveEvent, string>();
export function eventDataJson(e: LiveEvent): string {
  let j = dataJson.get(e);
  if (j === undefined) dataJson.set(e, (j = JSON.stringify(e.data)));
  return j;
}

/**
 * A Server-Sent Events response as a stream transport: writes events with `res.write`, refuses (the
 * subscriber is dropped) once more than `budgetBytes` are queued unread in user space, and sends a
 * `: hb` comment every `heartbeatMs` so proxies keep the connection open. Headers: `text/event-stream`,
 * `no-cache, no-transform`, `X-Accel-Buffering: no`, and `retry: 3000` first.
 */
export class SseTransport implements StreamTransport {
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;

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
    this.heartbeat = setInterval(() => {
      if (res.writableLength <= budgetBytes) res.write(": hb\n\n");
    }, heartbeatMs);
    this.heartbeat.unref();
    res.on("close", () => this.dispose());
  }

  send(e: LiveEvent, replay = false): boolean {
    if (this.closed) return false;
    if (!replay && this.res.writableLength > this.budgetBytes) return false;
    this.res.write(formatSse(e));
    return true;
  }

  end(last?: LiveEvent): void {
    if (this.closed) return;
    // The last event goes out even from a full buffer: it is small, and it says why the stream ended.
    if (last) this.res.write(formatSse(last));
    this.dispose();
    this.res.end();
    // A subscriber that stopped reading would hold the unread bytes for as long as it keeps the socket.
    if (this.res.writableLength > 0) setTimeout(() => this.res.destroy(), 2000).unref();
  }

  private dispose(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
  }
}
