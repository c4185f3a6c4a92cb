import type WebSocket from "ws";

/** The status a WebSocket upgrade was refused with, or "open" when it was accepted (the socket is then closed). */
export function upgradeStatus(ws: WebSocket): Promise<number | "open"> {
  return new Promise((resolve, reject) => {
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once("open", () => {
      resolve("open");
      ws.close();
    });
    ws.once("error", reject);
  });
}
