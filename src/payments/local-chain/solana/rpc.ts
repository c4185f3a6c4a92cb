import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { address, getBase64Decoder, isAddress } from "@solana/kit";
import type { LiteSVM } from "litesvm";

/** Largest JSON-RPC request body read, bytes (the two calls answered are a few hundred bytes). */
const MAX_BODY_BYTES = 16 * 1024;

/** A running loopback JSON-RPC endpoint over a LiteSVM. */
export interface LocalSolanaRpc {
  /** e.g. `http://127.0.0.1:8899`. */
  url: string;
  close(): Promise<void>;
}

type RpcAnswer = { result: unknown } | { error: { code: number; message: string } };

/** Answers one JSON-RPC call from the VM: the two methods the official x402 SVM client makes. */
function answer(svm: LiteSVM, method: unknown, params: unknown): RpcAnswer {
  const context = { slot: Number(svm.getClock().slot) };
  if (method === "getLatestBlockhash") {
    // The VM keeps one blockhash until `expireBlockhash()`: its validity is not counted in blocks here.
    return { result: { context, value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: context.slot + 150 } } };
  }
  if (method === "getAccountInfo") {
    const at = Array.isArray(params) ? params[0] : undefined;
    if (typeof at !== "string" || !isAddress(at)) return { error: { code: -32602, message: "params[0] must be a base58 address" } };
    const a = svm.getAccount(address(at));
    const value = a.exists
      ? {
          data: [getBase64Decoder().decode(a.data), "base64"],
          executable: a.executable,
          lamports: Number(a.lamports),
          owner: a.programAddress,
          rentEpoch: 0,
          space: Number(a.space),
        }
      : null;
    return { result: { context, value } };
  }
  return { error: { code: -32601, message: `method not served by the local Solana VM: ${String(method).slice(0, 64)} (only getAccountInfo and getLatestBlockhash)` } };
}

/**
 * A minimal Solana JSON-RPC endpoint on 127.0.0.1 for clients paying on the local VM: `getAccountInfo`
 * (base64 encoding; the client reads the USDC mint) and `getLatestBlockhash`, the two calls
 * `@x402/svm`'s `exact` client makes. Other methods answer JSON-RPC error -32601.
 * @param port TCP port; 0 picks a free one.
 */
export async function startLocalSolanaRpc(svm: LiteSVM, port = 0): Promise<LocalSolanaRpc> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reply(413, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "request too large" } });
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => {
      if (res.writableEnded) return;
      let call: { id?: unknown; method?: unknown; params?: unknown };
      try {
        call = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof call;
      } catch {
        return reply(200, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
      }
      const id = typeof call?.id === "number" || typeof call?.id === "string" ? call.id : null;
      reply(200, { jsonrpc: "2.0", id, ...answer(svm, call?.method, call?.params) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
