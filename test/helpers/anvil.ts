/**
 * Calls one JSON-RPC method of a local anvil node (`evm_setAutomine`, `evm_mine`, `anvil_mine`,
 * `anvil_dropTransaction`, …) and resolves its result. @throws Error carrying the node's error message.
 */
export async function anvilRpc(rpcUrl: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Stops mining on `rpcUrl` (transactions wait in the pool) until the returned function is called, which mines them and resumes. */
export async function pauseMining(rpcUrl: string): Promise<() => Promise<void>> {
  await anvilRpc(rpcUrl, "evm_setAutomine", [false]);
  return async () => {
    await anvilRpc(rpcUrl, "evm_mine");
    await anvilRpc(rpcUrl, "evm_setAutomine", [true]);
  };
}
