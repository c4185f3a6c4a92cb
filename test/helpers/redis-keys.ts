import { createClient } from "redis";
import { TEST_REDIS_URL } from "./redis-available.js";

/** Deletes every key under `prefix` on the test Redis (a test run's own namespace), over a connection of its own. */
export async function deleteRedisPrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const c = await createClient({ url }).connect();
  try {
    for await (const keys of c.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await c.del(keys);
  } finally {
    await c.close();
  }
}
