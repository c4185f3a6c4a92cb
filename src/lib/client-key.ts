import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The rate-limit identity of a client address (`req.ip` as resolved under express `trust proxy`):
 * - IPv4, and IPv4-mapped IPv6 (`::ffff:1.2.3.4`, what a dual-stack socket reports), → the IPv4 address;
 * - any other IPv6 address → its /64 prefix, e.g. `2001:db8:1:2::/64`. One subscriber or host usually
 *   holds a whole /64 (SLAAC, privacy addresses), so counting single IPv6 addresses would give every
 *   client 2^64 buckets;
 * - anything that is not an IP literal (`undefined`, `"unknown"`) → itself, or `"unknown"`: such
 *   requests share one bucket rather than escape the limit.
 *
 * Never throws.
 */
export function clientKey(ip: string | undefined): string {
  if (!ip) return "unknown";
  // Strict syntax first: ipaddr.js also reads inet_aton forms ("0x7f.1") that no socket reports.
  const family = isIP(ip);
  if (family === 0) return ip;
  const addr = ipaddr.process(ip);
  if (addr.kind() === "ipv4") return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toRFC5952String()}/64`;
}
