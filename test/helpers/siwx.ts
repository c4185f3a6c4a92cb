/** Tests build one-round-trip SIWX proofs with the service's own client helper. */
export { siwxHeader } from "../../src/payments/credits/client.js";
