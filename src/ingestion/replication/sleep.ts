/** Resolves after `ms`; the timer is unref'd so a pending wait never keeps the process alive. */
export const sleep = (ms: number): Promise<void> => new Promise<void>((r) => setTimeout(r, ms).unref());
