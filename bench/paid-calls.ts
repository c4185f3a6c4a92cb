import { listAssets } from "../src/assets/catalogue.js";

/** `n` distinct batch-price paths (every one a cache miss), starting at `offset` in a long sequence. */
export function pricePaths(n: number, offset: number): string[] {
  const syms = listAssets().map((a) => a.symbol.toLowerCase());
  return Array.from({ length: n }, (_, i) => `/api/v1/prices?symbols=${syms[(i + offset) % syms.length]},zz${i + offset}`);
}

/** Each request's latency, ms, sorted ascending, calling `call` on the paths one after another. @throws when one does not answer 200. */
export async function timeEach(list: string[], call: (path: string) => Promise<Response>): Promise<number[]> {
  const ms: number[] = [];
  for (const p of list) {
    const t0 = performance.now();
    const res = await call(p);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${p} answered ${res.status}`);
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b);
}
