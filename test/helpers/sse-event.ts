/**
 * Reads an SSE answer until its first `event: <name>` frame arrives, then aborts the request and returns that
 * frame's `data` parsed as JSON. @throws Error when the stream ends first.
 */
export async function firstSseEvent<T>(res: Response, name: string, abort: AbortController): Promise<T> {
  const frame = new RegExp(`event: ${name}\\ndata: (.*)\\n`);
  const reader = res.body!.getReader();
  let text = "";
  try {
    while (!frame.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before an "${name}" event`);
      text += Buffer.from(value).toString("utf8");
    }
  } finally {
    abort.abort();
  }
  return JSON.parse(frame.exec(text)![1]!) as T;
}
