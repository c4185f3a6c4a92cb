/** One Server-Sent Event: its name (`message` when unnamed), its id if it has one, and its data lines joined. */
export interface SseMessage {
  event: string;
  id?: string;
  data: string;
}

/**
 * The events of an SSE body, in order (the WHATWG event-stream format: `event:`, `data:`, `id:` fields, a blank line
 * ends an event, `:` lines are comments such as heartbeats, `retry:` is ignored). Ends when the body ends.
 */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let id: string | undefined;
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (data.length) yield { event: event || "message", ...(id !== undefined ? { id } : {}), data: data.join("\n") };
        event = "";
        id = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
      else if (field === "id") id = value;
    }
  }
}
