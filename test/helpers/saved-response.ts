/** The bytes `curl -si URL > file` saves of `res`: status line, headers, blank line, body (consumes the body). */
export async function savedResponse(res: Response): Promise<Buffer> {
  const head = [`HTTP/1.1 ${res.status} ${res.statusText}`, ...[...res.headers].map(([k, v]) => `${k}: ${v}`)].join("\r\n");
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, "latin1"), Buffer.from(await res.arrayBuffer())]);
}
