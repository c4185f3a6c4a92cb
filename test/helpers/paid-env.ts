/**
 * The environment of a paid service that needs no running chain until a payment arrives: the self facilitator
 * with an RPC that nothing answers (port 9), credits on by default, no streams or alerts, an in-memory database
 * and a free port. Tests spread it and add what they test.
 */
export const PAID_ENV_NO_CHAIN: Readonly<Record<string, string>> = {
  PAY_TO: "0x000000000000000000000000000000000000dEaD",
  FACILITATOR: "self",
  RELAYER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
  RPC_URL: "http://127.0.0.1:9/",
  STREAMS: "off",
  ALERTS: "off",
  DATA_DIR: ":memory:",
  PORT: "0",
};
