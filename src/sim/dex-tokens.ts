/**
 * Token and pool tables of the simulated DEX venues (DexScreener, GeckoTerminal).
 *
 * Token contract addresses of the CANONICAL tokens are the real mainnet ones (EVM addresses in EIP-55 checksum case,
 * Solana mints as base58), so the service's canonical-token registry can be tested against them. Pool addresses are
 * real where marked `real: true` (well-known Uniswap v3/v2, Raydium, Orca pools and one real BSC dust pool);
 * every other pool address, and every look-alike token address, is a deterministic FAKE derived from a label
 * (stable across seeds). Liquidity, volume, supply and creation dates are SIMULATED, rough, illustrative levels.
 *
 * Roles:
 * - `canonical`: the real token of a catalogue asset on a chain (WETH, WBTC, cbBTC, BTCB, Binance-Peg tokens, ...),
 *   priced by the shared market model (`asset`);
 * - `stable`: USDC / USDT / DAI (≈ 1 USD);
 * - `other`: real non-catalogue tokens used as pool partners (AERO, CAKE, BONK, WIF — WIF follows the model's extra);
 * - `lookalike`: scam tokens reusing a real symbol ("ETH", "WETH", "BTC", "WBTC", "SOL", "PEPE", "USDT", "cbBTC") at fake
 *   addresses with absurd prices; `cbBTC@base` is the young one (one thin pool created 2 days 9 hours before the
 *   simulator's start, about 90 swaps a day) for the token-by-address guards;
 * - `thin`: a made-up token at a fake address (MOTH on Solana) whose one pool swaps about 150 times a day, so its
 *   minute candles have gaps (intervals without swaps), as real small tokens do.
 */
import { getAddress } from "viem";
import { fnv1a, mix32 } from "./market.js";

/** Chains the simulated DEX venues serve, with each venue's chain/network id and the chain's native asset. */
export const SIM_DEX_CHAINS = {
  ethereum: { dexscreener: "ethereum", geckoterminal: "eth", nativeAsset: "ETH" },
  base: { dexscreener: "base", geckoterminal: "base", nativeAsset: "ETH" },
  arbitrum: { dexscreener: "arbitrum", geckoterminal: "arbitrum", nativeAsset: "ETH" },
  optimism: { dexscreener: "optimism", geckoterminal: "optimism", nativeAsset: "ETH" },
  polygon: { dexscreener: "polygon", geckoterminal: "polygon_pos", nativeAsset: "MATIC" },
  bsc: { dexscreener: "bsc", geckoterminal: "bsc", nativeAsset: "BNB" },
  avalanche: { dexscreener: "avalanche", geckoterminal: "avax", nativeAsset: "AVAX" },
  solana: { dexscreener: "solana", geckoterminal: "solana", nativeAsset: "SOL" },
} as const;

export type SimDexChain = keyof typeof SIM_DEX_CHAINS;
export const SIM_DEX_CHAIN_KEYS = Object.keys(SIM_DEX_CHAINS) as SimDexChain[];

export type SimDexTokenRole = "canonical" | "stable" | "other" | "lookalike" | "thin";

/** One token as the simulated DEX venues report it. */
export interface SimDexToken {
  /** Table key: `<SYMBOL>@<chain>` (look-alikes: `fake-<label>@<chain>`). */
  readonly key: string;
  readonly chain: SimDexChain;
  /** Address as DexScreener shows it (EIP-55 checksum case for EVM; base58 mint for Solana). */
  readonly address: string;
  readonly symbol: string;
  readonly name: string;
  readonly role: SimDexTokenRole;
  /** Market-model symbol whose price the token follows (catalogue symbol, or the model extra `WIF`); null otherwise. */
  readonly asset: string | null;
  /** CoinGecko coin id as GeckoTerminal reports it, or null. */
  readonly coingeckoId: string | null;
  /** The chain's wrapped native token (WETH on ethereum/base/arbitrum/optimism, WBNB, WAVAX, WPOL, wrapped SOL). */
  readonly wrappedNative: boolean;
  /** Supply in tokens: a number (simulated; market cap = FDV) or `"model"` (the asset's model supplies). */
  readonly supply: number | "model";
  /** Price process of tokens without `asset`: level in USD and volatility multiplier. */
  readonly level: number;
  readonly vol: number;
}

/** One simulated pool (pair). Base/quote order is the venue's (the same on both venues). */
export interface SimDexPool {
  /** Index in {@link SIM_DEX_POOLS}. */
  readonly index: number;
  readonly chain: SimDexChain;
  /** As DexScreener shows it (checksum case for EVM). */
  readonly address: string;
  /** True when `address` is the real on-chain pool of that pair. */
  readonly real: boolean;
  /** DexScreener `dexId` and `labels`. */
  readonly dexId: string;
  readonly labels: readonly string[] | null;
  /** GeckoTerminal dex id and display name. */
  readonly gtDexId: string;
  readonly gtDexName: string;
  /** Fee tier shown in GeckoTerminal pool names (`"0.05%"`), or null. */
  readonly feeLabel: string | null;
  readonly base: SimDexToken;
  readonly quote: SimDexToken;
  /** `main` = regular pool of real tokens; `dust` = real tokens, liquidity < $1k; `lookalike` = involves a scam
   * token; `exotic_quote` = real tokens but the quote is not a usual quote asset (meme token). */
  readonly kind: "main" | "dust" | "lookalike" | "exotic_quote";
  /** Typical liquidity (USD), typical 24h volume (USD) and average swap size (USD). Simulated. */
  readonly liquidityUsd: number;
  readonly volume24hUsd: number;
  readonly avgSwapUsd: number;
  /** Typical deviation of the pool price from the token's reference price, basis points. */
  readonly devBp: number;
  /**
   * When the pool was created: a fixed instant for pools years old (`atMs`, epoch ms, whole seconds), or an age
   * before the simulator's start (`ageMs`) for young pools, so that a pool meant to be days old stays days old
   * whatever the date (see {@link poolCreatedAt}).
   */
  readonly created: { readonly atMs: number } | { readonly ageMs: number };
  /** DexScreener omits `liquidity` (and `fdv`/`marketCap`) for this pool. */
  readonly dsOmitLiquidity: boolean;
  /** DexScreener reports this absurd `priceChange.h24` (real dust-pool quirk), or null. */
  readonly dsAbsurdChange24h: number | null;
  /** GeckoTerminal reports `buyers`/`sellers` as null (curve/balancer-style pools). */
  readonly gtNullTraders: boolean;
  /** Look-alike quote pools: base price = quote price × this ratio (the pool's own, absurd, valuation). */
  readonly nativeRatio: number | null;
  /** Hash stream of the pool. */
  readonly stream: number;
}

// ------------------------------------------------------------------------------------------------ addresses

const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Deterministic fake EVM address (checksum case) for `label`. */
export function fakeEvmAddress(label: string): string {
  let h = fnv1a(`marketgate-sim-dex-address:${label}`);
  let hex = "";
  for (let i = 0; i < 5; i++) {
    h = mix32(h ^ Math.imul(i + 1, 0x9e3779b9));
    hex += h.toString(16).padStart(8, "0");
  }
  return getAddress(`0x${hex}`);
}

/** Deterministic fake Solana address (44 base58 chars, optionally ending in `suffix`, e.g. `pump`). */
export function fakeSolanaAddress(label: string, suffix = ""): string {
  let h = fnv1a(`marketgate-sim-dex-address:${label}`);
  let s = "";
  while (s.length < 44 - suffix.length) {
    h = mix32(h ^ 0x85ebca6b ^ s.length);
    s += B58[h % 58] ?? "1";
  }
  return s + suffix;
}

function fakeAddress(chain: SimDexChain, label: string, suffix = ""): string {
  return chain === "solana" ? fakeSolanaAddress(label, suffix) : fakeEvmAddress(label);
}

// ------------------------------------------------------------------------------------------------ tokens

const tokens: SimDexToken[] = [];
const tokenByKey = new Map<string, SimDexToken>();

interface TokenOpts {
  asset?: string | null;
  cg?: string | null;
  native?: boolean;
  supply?: number | "model";
  level?: number;
  vol?: number;
}

function tok(chain: SimDexChain, symbol: string, name: string, address: string, role: SimDexTokenRole, o: TokenOpts = {}): void {
  const key = role === "lookalike" ? `fake-${symbol}-${address.slice(-4)}@${chain}` : `${symbol}@${chain}`;
  if (tokenByKey.has(key)) throw new Error(`duplicate sim dex token ${key}`);
  const t: SimDexToken = {
    key,
    chain,
    address,
    symbol,
    name,
    role,
    asset: o.asset ?? null,
    coingeckoId: o.cg ?? null,
    wrappedNative: o.native ?? false,
    supply: o.supply ?? 1_000_000_000,
    level: o.level ?? 1,
    vol: o.vol ?? 1,
  };
  tokens.push(t);
  tokenByKey.set(key, t);
}

const canon = (chain: SimDexChain, symbol: string, name: string, address: string, asset: string, o: TokenOpts = {}) =>
  tok(chain, symbol, name, address, "canonical", { asset, ...o });
const stable = (chain: SimDexChain, symbol: string, name: string, address: string, cg: string, supply: number) => tok(chain, symbol, name, address, "stable", { cg, supply });

// ethereum
canon("ethereum", "WETH", "Wrapped Ether", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "ETH", { cg: "weth", native: true, supply: 2_950_000 });
stable("ethereum", "USDC", "USD Coin", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "usd-coin", 41_000_000_000);
stable("ethereum", "USDT", "Tether USD", "0xdAC17F958D2ee523a2206206994597C13D831ec7", "tether", 78_000_000_000);
stable("ethereum", "DAI", "Dai Stablecoin", "0x6B175474E89094C44Da98b954EedeAC495271d0F", "dai", 3_600_000_000);
canon("ethereum", "WBTC", "Wrapped BTC", "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599", "BTC", { cg: "wrapped-bitcoin", supply: 129_000 });
canon("ethereum", "cbBTC", "Coinbase Wrapped BTC", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", "BTC", { cg: "coinbase-wrapped-btc", supply: 41_000 });
canon("ethereum", "LINK", "ChainLink Token", "0x514910771AF9Ca656af840dff83E8264EcF986CA", "LINK", { cg: "chainlink", supply: "model" });
canon("ethereum", "UNI", "Uniswap", "0x1f9840a85d5aF5bf1D1762F925BDADdC4201F984", "UNI", { cg: "uniswap", supply: "model" });
canon("ethereum", "PEPE", "Pepe", "0x6982508145454Ce325dDbE47a25d4ec3d2311933", "PEPE", { cg: "pepe", supply: "model" });
canon("ethereum", "SHIB", "SHIBA INU", "0x95aD61b0a150d79219dCF64E1E6Cc01f0B64C4cE", "SHIB", { cg: "shiba-inu", supply: "model" });
canon("ethereum", "MATIC", "Matic Token", "0x7D1AfA7B718fb893dB30A3aBc0Cfc608AaCfeBB0", "MATIC", { supply: 1_400_000_000 });
canon("ethereum", "TONCOIN", "Wrapped TON Coin", "0x582d872A1B094FC48F5DE31D3B73F2D9bE47def1", "TON", { supply: 48_000_000 });
// base
canon("base", "WETH", "Wrapped Ether", "0x4200000000000000000000000000000000000006", "ETH", { cg: "weth", native: true, supply: 310_000 });
stable("base", "USDC", "USD Coin", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "usd-coin", 4_100_000_000);
canon("base", "cbBTC", "Coinbase Wrapped BTC", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", "BTC", { cg: "coinbase-wrapped-btc", supply: 41_000 });
tok("base", "AERO", "Aerodrome", "0x940181a94A35A4569E4529A3CDfB74e38FD98631", "other", { cg: "aerodrome-finance", supply: 1_700_000_000, level: 0.9, vol: 1.1 });
// arbitrum
canon("arbitrum", "WETH", "Wrapped Ether", "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", "ETH", { cg: "weth", native: true, supply: 420_000 });
stable("arbitrum", "USDC", "USD Coin", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "usd-coin", 2_300_000_000);
stable("arbitrum", "USDT", "Tether USD", "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", "tether", 900_000_000);
canon("arbitrum", "WBTC", "Wrapped BTC", "0x2f2a2543B76A4166549F7aaB2e75Bef0aefC5B0f", "BTC", { cg: "wrapped-bitcoin", supply: 4_200 });
canon("arbitrum", "ARB", "Arbitrum", "0x912CE59144191C1204E64559FE8253a0e49E6548", "ARB", { cg: "arbitrum", supply: "model" });
canon("arbitrum", "LINK", "ChainLink Token", "0xf97f4df75117a78c1A5a0DBb814Af92458539FB4", "LINK", { supply: 9_500_000 });
canon("arbitrum", "UNI", "Uniswap", "0xFa7F8980b0f1E64A2062791cc3b0871572f1F7f0", "UNI", { supply: 4_100_000 });
// optimism
canon("optimism", "WETH", "Wrapped Ether", "0x4200000000000000000000000000000000000006", "ETH", { cg: "weth", native: true, supply: 95_000 });
stable("optimism", "USDC", "USD Coin", "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85", "usd-coin", 480_000_000);
canon("optimism", "OP", "Optimism", "0x4200000000000000000000000000000000000042", "OP", { cg: "optimism", supply: "model" });
canon("optimism", "WBTC", "Wrapped BTC", "0x68f180fcCe6836688e9084f035309E29Bf0A2095", "BTC", { cg: "wrapped-bitcoin", supply: 900 });
// polygon
canon("polygon", "WPOL", "Wrapped Polygon Ecosystem Token", "0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270", "MATIC", { native: true, supply: 330_000_000 });
canon("polygon", "WETH", "Wrapped Ether", "0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619", "ETH", { supply: 48_000 });
stable("polygon", "USDC", "USD Coin", "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "usd-coin", 620_000_000);
stable("polygon", "USDT", "(PoS) Tether USD", "0xc2132D05D31c914a87C6611C10748AEb04B58e8F", "tether", 1_100_000_000);
canon("polygon", "WBTC", "(PoS) Wrapped BTC", "0x1BFD67037B42Cf73acF2047067bd4F2C47D9BfD6", "BTC", { supply: 1_300 });
// bsc
canon("bsc", "WBNB", "Wrapped BNB", "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c", "BNB", { cg: "wbnb", native: true, supply: 1_450_000 });
stable("bsc", "USDT", "Tether USD", "0x55d398326f99059fF775485246999027B3197955", "tether", 6_800_000_000);
stable("bsc", "USDC", "USD Coin", "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d", "usd-coin", 1_200_000_000);
canon("bsc", "BTCB", "BTCB Token", "0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c", "BTC", { cg: "binance-bitcoin", supply: 62_000 });
canon("bsc", "ETH", "Ethereum Token", "0x2170Ed0880ac9A755fd29B2688956BD959F933F8", "ETH", { supply: 490_000 });
canon("bsc", "XRP", "XRP Token", "0x1D2F0da169ceB9fC7B3144628dB156f3F6c60dBE", "XRP", { supply: 110_000_000 });
canon("bsc", "ADA", "Cardano Token", "0x3EE2200Efb3400fAbB9AacF31297cBdD1d435D47", "ADA", { supply: 280_000_000 });
canon("bsc", "DOGE", "Dogecoin", "0xbA2aE424d960c26247Dd6c32edC70B295c744C43", "DOGE", { supply: 360_000_000 });
canon("bsc", "DOT", "Polkadot Token", "0x7083609fCE4d1d8Dc0C979AAb8c869Ea2C873402", "DOT", { supply: 15_000_000 });
canon("bsc", "LTC", "Litecoin Token", "0x4338665CBB7B2485A8855A139b75D5e34AB0DB94", "LTC", { supply: 280_000 });
canon("bsc", "LINK", "ChainLink Token", "0xF8A0BF9cF54Bb92F17374d9e9A321E6a111a51bD", "LINK", { supply: 11_000_000 });
canon("bsc", "TRX", "TRON", "0xCE7de646e7208a4Ef112cb6ed5038FA6cC6b12e3", "TRX", { supply: 1_600_000_000 });
canon("bsc", "ATOM", "Cosmos Token", "0x0Eb3a705fc54725037CC9e008bDede697f62F335", "ATOM", { supply: 5_000_000 });
canon("bsc", "NEAR", "NEAR Protocol", "0x1Fa4a73a3F0133f0025378af00236f3aBDEE5D63", "NEAR", { supply: 12_000_000 });
canon("bsc", "SOL", "SOLANA", "0x570A5D26f7765Ecb712C0924E4De545B89fD43dF", "SOL", { supply: 850_000 });
canon("bsc", "AVAX", "Avalanche", "0x1CE0c2827e2eF14D5C4f29a091d735A204794041", "AVAX", { supply: 3_200_000 });
canon("bsc", "SHIB", "SHIBA INU", "0x2859e4544C4bB03966803b044A93563Bd2D0DD4D", "SHIB", { supply: 9_000_000_000_000 });
tok("bsc", "Cake", "PancakeSwap Token", "0x0E09FaBB73Bd3Ade0a17ECC321fD13a19e81cE82", "other", { cg: "pancakeswap-token", supply: 370_000_000, level: 2.3, vol: 0.9 });
// avalanche
canon("avalanche", "WAVAX", "Wrapped AVAX", "0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7", "AVAX", { cg: "wrapped-avax", native: true, supply: 9_500_000 });
stable("avalanche", "USDC", "USD Coin", "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", "usd-coin", 750_000_000);
stable("avalanche", "USDt", "TetherToken", "0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7", "tether", 1_000_000_000);
canon("avalanche", "BTC.b", "Bitcoin", "0x152b9d0FdC40C096757F570A51E494bd4b943E50", "BTC", { supply: 3_100 });
canon("avalanche", "WETH.e", "Wrapped Ether", "0x49D5c2BdFfac6CE2BFdB6640F4F80f226bc10bAB", "ETH", { supply: 36_000 });
// solana
canon("solana", "SOL", "Wrapped SOL", "So11111111111111111111111111111111111111112", "SOL", { cg: "wrapped-solana", native: true, supply: "model" });
stable("solana", "USDC", "USD Coin", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "usd-coin", 9_000_000_000);
stable("solana", "USDT", "USDT", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", "tether", 2_400_000_000);
tok("solana", "Bonk", "Bonk", "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263", "other", { cg: "bonk", supply: 88_000_000_000_000, level: 0.000015, vol: 1.2 });
tok("solana", "$WIF", "dogwifhat", "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm", "other", { asset: "WIF", cg: "dogwifcoin", supply: 998_900_000 });

// look-alikes (fake addresses, absurd prices)
const fake = (chain: SimDexChain, symbol: string, name: string, label: string, level: number, vol: number, supply: number, suffix = "") =>
  tok(chain, symbol, name, fakeAddress(chain, `lookalike:${label}`, suffix), "lookalike", { level, vol, supply });
fake("ethereum", "ETH", "Ethereum", "eth-ethereum", 0.000042, 2.5, 120_000_000_000);
fake("ethereum", "WETH", "Wrapped Ether", "weth-ethereum", 41_200, 0.8, 1_000_000);
fake("ethereum", "WBTC", "Wrapped BTC", "wbtc-ethereum", 2_400_000, 0.8, 21_000_000);
fake("ethereum", "PEPE", "Pepe", "pepe-ethereum", 0.0000000012, 2, 420_690_000_000_000_000);
fake("base", "WETH", "Wrapped Ether", "weth-base", 3.1, 1.5, 100_000_000);
fake("bsc", "BTC", "Bitcoin", "btc-bsc", 0.0071, 2, 21_000_000_000);
fake("bsc", "PEPE", "Pepe", "pepe-bsc", 0.00042, 1.2, 420_690_000_000);
fake("bsc", "USDT", "Tether USD", "usdt-bsc", 0.0127, 1, 10_000_000_000);
fake("solana", "SOL", "Solana", "sol-solana", 0.00031, 3, 1_000_000_000, "pump");
fake("base", "cbBTC", "Coinbase Wrapped BTC", "cbbtc-base-young", 0.93, 2.5, 21_000_000);
// thin (fake address, few swaps: candles with gaps)
tok("solana", "MOTH", "Mothcoin", fakeSolanaAddress("thin:moth-solana", "pump"), "thin", { supply: 1_000_000_000, level: 0.00042, vol: 1.6 });

/** Every simulated DEX token (canonical, stable, other, look-alike). */
export const SIM_DEX_TOKENS: readonly SimDexToken[] = tokens;

/** Token by table key (`WETH@ethereum`); throws on an unknown key (table bug). */
export function simDexToken(key: string): SimDexToken {
  const t = tokenByKey.get(key);
  if (!t) throw new Error(`unknown sim dex token ${key}`);
  return t;
}

/** Look-alike token of `symbol` on `chain` (first match). */
function lookalike(symbol: string, chain: SimDexChain): SimDexToken {
  const t = tokens.find((x) => x.role === "lookalike" && x.symbol === symbol && x.chain === chain);
  if (!t) throw new Error(`no look-alike ${symbol}@${chain}`);
  return t;
}

// ------------------------------------------------------------------------------------------------ pools

const pools: SimDexPool[] = [];
const poolLabels = new Set<string>();

interface PoolOpts {
  address?: string;
  labels?: string[];
  fee?: string;
  kind?: SimDexPool["kind"];
  devBp?: number;
  dsOmitLiquidity?: boolean;
  dsAbsurdChange24h?: number;
  gtNullTraders?: boolean;
  nativeRatio?: number;
}

/** Known GeckoTerminal dex display names. */
const GT_DEX_NAMES: Record<string, string> = {
  uniswap_v3: "Uniswap V3 (Ethereum)",
  uniswap_v2: "Uniswap V2 (Ethereum)",
  "pancakeswap-v3-ethereum": "PancakeSwap V3 (Ethereum)",
  "aerodrome-base": "Aerodrome (Base)",
  "uniswap-v3-base": "Uniswap V3 (Base)",
  uniswap_v3_arbitrum: "Uniswap V3 (Arbitrum)",
  camelot: "Camelot",
  balancer_arbitrum: "Balancer V2 (Arbitrum)",
  "sushiswap-arbitrum": "SushiSwap (Arbitrum)",
  "velodrome-finance-v2": "Velodrome Finance V2",
  uniswap_v3_optimism: "Uniswap V3 (Optimism)",
  quickswap: "QuickSwap",
  uniswap_v3_polygon_pos: "Uniswap V3 (Polygon)",
  "pancakeswap-v3-bsc": "PancakeSwap V3 (BSC)",
  pancakeswap_v2: "PancakeSwap V2 (BSC)",
  squadswap: "SquadSwap V3",
  "traderjoe-v2-1-avalanche": "Trader Joe V2.1 (Avalanche)",
  pangolin: "Pangolin",
  raydium: "Raydium",
  "raydium-clmm": "Raydium (CLMM)",
  orca: "Orca",
  meteora: "Meteora DLMM",
  fluxbeam: "FluxBeam",
};

function pool(
  chain: SimDexChain,
  dexId: string,
  gtDexId: string,
  baseKey: string,
  quoteKey: string,
  liquidityUsd: number,
  volume24hUsd: number,
  avgSwapUsd: number,
  created: string | { ageMs: number },
  o: PoolOpts = {},
): void {
  const base = baseKey.startsWith("fake:") ? lookalike(baseKey.slice(5), chain) : simDexToken(`${baseKey}@${chain}`);
  const quote = quoteKey.startsWith("fake:") ? lookalike(quoteKey.slice(5), chain) : simDexToken(`${quoteKey}@${chain}`);
  const label = `${chain}:${dexId}:${gtDexId}:${base.key}/${quote.key}:${o.fee ?? ""}`;
  if (poolLabels.has(label)) throw new Error(`duplicate sim dex pool ${label}`);
  poolLabels.add(label);
  const real = o.address !== undefined;
  const address = o.address ?? fakeAddress(chain, `pool:${label}`);
  const kind = o.kind ?? (base.role === "lookalike" || quote.role === "lookalike" ? "lookalike" : "main");
  const createdAt = typeof created === "string" ? Date.parse(created) : created.ageMs;
  if (!Number.isFinite(createdAt)) throw new Error(`bad created date ${JSON.stringify(created)}`);
  pools.push({
    index: pools.length,
    chain,
    address: chain === "solana" ? address : getAddress(address.toLowerCase()),
    real,
    dexId,
    labels: o.labels ?? null,
    gtDexId,
    gtDexName: GT_DEX_NAMES[gtDexId] ?? gtDexId,
    feeLabel: o.fee ?? null,
    base,
    quote,
    kind,
    liquidityUsd,
    volume24hUsd,
    avgSwapUsd,
    devBp: o.devBp ?? (kind === "dust" ? 250 : kind === "main" ? Math.min(25, Math.max(1.5, 4e4 / Math.sqrt(liquidityUsd))) : 60),
    created: typeof created === "string" ? { atMs: Math.floor(createdAt / 1000) * 1000 } : { ageMs: createdAt },
    dsOmitLiquidity: o.dsOmitLiquidity ?? false,
    dsAbsurdChange24h: o.dsAbsurdChange24h ?? null,
    gtNullTraders: o.gtNullTraders ?? false,
    nativeRatio: o.nativeRatio ?? null,
    stream: fnv1a(`dex-pool:${label}`),
  });
}

const DAY_MS = 86_400_000;
/** Age of the young look-alike cbBTC pool at the simulator's start: well inside the 7 days a pool counts as unverified. */
export const YOUNG_POOL_AGE_MS = 2 * DAY_MS + 9 * 3_600_000 + 12 * 60_000 + 33_000;

/**
 * Creation time (epoch ms, whole seconds) of `pool` for a simulator started at `startMs` (its clock's reading when
 * the DEX model was built): the fixed instant, or `startMs` less the pool's age.
 */
export function poolCreatedAt(pool: SimDexPool, startMs: number): number {
  return "atMs" in pool.created ? pool.created.atMs : Math.floor((startMs - pool.created.ageMs) / 1000) * 1000;
}

const V3 = ["v3"];
const V2 = ["v2"];

// ethereum ------------------------------------------------------------------------------------------------
pool("ethereum", "uniswap", "uniswap_v3", "WETH", "USDC", 152e6, 120e6, 17_500, "2021-12-29T12:35:14Z", {
  address: "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640",
  labels: V3,
  fee: "0.05%",
});
pool("ethereum", "uniswap", "uniswap_v3", "USDC", "WETH", 76e6, 4.2e6, 12_000, "2021-12-29T13:21:42Z", {
  address: "0x8ad599c3a0ff1de082011efddc58f1908eb6e6d8",
  labels: V3,
  fee: "0.3%",
});
pool("ethereum", "uniswap", "uniswap_v3", "WETH", "USDT", 49e6, 84e6, 16_800, "2021-12-29T12:35:27Z", {
  address: "0x11b815efb8f581194ae79006d24e0d814b7697f6",
  labels: V3,
  fee: "0.05%",
});
pool("ethereum", "uniswap", "uniswap_v3", "WETH", "USDT", 84e6, 6.6e6, 16_000, "2021-12-29T12:36:12Z", {
  address: "0x4e68ccd3e89f51c3074ca5072bbac773960dfa36",
  labels: V3,
  fee: "0.3%",
});
pool("ethereum", "uniswap", "uniswap_v2", "WETH", "USDT", 58e6, 7e6, 2_100, "2021-10-11T01:35:32Z", { address: "0x0d4a11d5eeaac28ec3f61d100daf4d40471f1852", labels: V2 });
pool("ethereum", "uniswap", "uniswap_v2", "WETH", "USDC", 45e6, 5.6e6, 1_900, "2021-10-11T01:35:30Z", { address: "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc", labels: V2 });
pool("ethereum", "uniswap", "uniswap_v3", "WETH", "USDC", 8e6, 25e6, 9_000, "2022-05-12T06:17:28Z", { labels: V3, fee: "0.01%" });
pool("ethereum", "sushiswap", "sushiswap", "USDC", "WETH", 4.2e6, 0.9e6, 1_400, "2020-09-09T02:28:11Z");
pool("ethereum", "uniswap", "uniswap_v3", "WETH", "DAI", 6e6, 1.5e6, 3_000, "2021-05-05T18:32:41Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v3", "WBTC", "WETH", 290e6, 8e6, 33_000, "2021-12-29T13:39:18Z", {
  address: "0xcbcdf9626bc03e24f779434178a73a0b4bad62ed",
  labels: V3,
  fee: "0.3%",
});
pool("ethereum", "uniswap", "uniswap_v3", "WBTC", "WETH", 74e6, 26e6, 30_000, "2021-12-29T12:36:14Z", {
  address: "0x4585fe77225b41b697c938b018e2ac67ac5a20c0",
  labels: V3,
  fee: "0.05%",
});
pool("ethereum", "uniswap", "uniswap_v3", "WBTC", "USDC", 32e6, 18e6, 15_000, "2021-05-05T19:02:11Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v3", "cbBTC", "USDC", 9e6, 22e6, 14_000, "2024-09-12T15:20:35Z", { labels: V3, fee: "0.05%" });
pool("ethereum", "uniswap", "uniswap_v2", "PEPE", "WETH", 40e6, 7.9e6, 4_600, "2023-04-14T17:21:11Z", { address: "0xa43fe16908251ee70ef74718545e4fe6c5ccec9f", labels: V2 });
pool("ethereum", "uniswap", "uniswap_v3", "PEPE", "WETH", 21e6, 14e6, 3_000, "2023-04-18T09:14:59Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v3", "LINK", "WETH", 24e6, 3.9e6, 18_000, "2021-12-29T12:36:53Z", {
  address: "0xa6cc3c2531fdaa6ae1a3ca84c2855806728693e8",
  labels: V3,
  fee: "0.3%",
});
pool("ethereum", "uniswap", "uniswap_v3", "LINK", "USDC", 3.1e6, 1.2e6, 5_000, "2022-03-01T11:47:02Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v3", "UNI", "WETH", 18e6, 3.5e6, 6_000, "2021-05-05T21:42:19Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v3", "UNI", "USDC", 2.8e6, 0.9e6, 3_000, "2021-06-01T08:12:44Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v2", "SHIB", "WETH", 14e6, 2.2e6, 1_500, "2020-08-01T13:05:51Z", { labels: V2 });
pool("ethereum", "uniswap", "uniswap_v3", "MATIC", "WETH", 2.1e6, 0.4e6, 2_000, "2021-05-05T22:01:37Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v3", "TONCOIN", "WETH", 1.1e6, 0.3e6, 1_500, "2022-05-02T10:33:15Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v3", "TONCOIN", "USDT", 0.6e6, 0.25e6, 1_200, "2023-01-09T16:48:26Z", { labels: V3, fee: "0.3%" });
pool("ethereum", "uniswap", "uniswap_v2", "SHIB", "PEPE", 85e3, 22e3, 250, "2023-05-10T20:11:07Z", { labels: V2, kind: "exotic_quote", devBp: 80 });
pool("ethereum", "pancakeswap", "pancakeswap-v3-ethereum", "WETH", "USDC", 420, 60, 30, "2023-06-01T07:44:31Z", { labels: V3, fee: "0.05%", kind: "dust" });
pool("ethereum", "uniswap", "uniswap_v3", "PEPE", "USDT", 150, 25, 12, "2023-05-01T03:19:58Z", { labels: V3, fee: "1%", kind: "dust", dsOmitLiquidity: true });
pool("ethereum", "uniswap", "uniswap_v2", "fake:ETH", "USDC", 1_150, 900, 45, "2025-02-11T14:02:09Z", { labels: V2 });
pool("ethereum", "uniswap", "uniswap_v2", "fake:WETH", "USDT", 4.8e6, 2.5e6, 600, "2025-06-20T05:55:41Z", { labels: V2 });
pool("ethereum", "uniswap", "uniswap_v2", "fake:WBTC", "WETH", 310e3, 95e3, 300, "2025-03-03T22:17:36Z", { labels: V2 });
pool("ethereum", "uniswap", "uniswap_v2", "fake:PEPE", "WETH", 3_200, 1_500, 40, "2024-12-24T01:26:50Z", { labels: V2 });
// base ----------------------------------------------------------------------------------------------------
pool("base", "aerodrome", "aerodrome-base", "WETH", "USDC", 31e6, 42e6, 2_000, "2023-08-28T19:41:57Z");
pool("base", "uniswap", "uniswap-v3-base", "WETH", "USDC", 21e6, 63e6, 1_500, "2023-07-28T12:09:33Z", { labels: V3, fee: "0.05%" });
pool("base", "aerodrome", "aerodrome-base", "cbBTC", "USDC", 26e6, 38e6, 4_000, "2024-09-12T18:37:21Z");
pool("base", "uniswap", "uniswap-v3-base", "cbBTC", "WETH", 12e6, 16e6, 5_000, "2024-09-13T02:51:48Z", { labels: V3, fee: "0.05%" });
pool("base", "aerodrome", "aerodrome-base", "AERO", "WETH", 18e6, 9e6, 900, "2023-08-28T20:03:12Z");
pool("base", "aerodrome", "aerodrome-base", "fake:WETH", "USDC", 2.4e6, 1.8e6, 350, "2025-04-02T09:30:00Z");
pool("base", "uniswap", "uniswap-v3-base", "fake:cbBTC", "USDC", 6_500, 4_000, 45, { ageMs: YOUNG_POOL_AGE_MS }, { labels: V3, fee: "1%" });
// arbitrum ------------------------------------------------------------------------------------------------
pool("arbitrum", "uniswap", "uniswap_v3_arbitrum", "WETH", "USDC", 26e6, 72e6, 3_000, "2023-06-10T10:25:43Z", { labels: V3, fee: "0.05%" });
pool("arbitrum", "camelot", "camelot", "WETH", "USDT", 3.2e6, 2.1e6, 800, "2022-12-01T16:39:08Z");
pool("arbitrum", "uniswap", "uniswap_v3_arbitrum", "WBTC", "WETH", 9e6, 11e6, 6_000, "2021-09-01T04:14:26Z", { labels: V3, fee: "0.05%" });
pool("arbitrum", "uniswap", "uniswap_v3_arbitrum", "ARB", "WETH", 8.5e6, 6e6, 900, "2023-03-23T13:00:41Z", { labels: V3, fee: "0.05%" });
pool("arbitrum", "uniswap", "uniswap_v3_arbitrum", "ARB", "USDC", 5.1e6, 4e6, 700, "2023-06-20T08:46:17Z", { labels: V3, fee: "0.05%" });
pool("arbitrum", "uniswap", "uniswap_v3_arbitrum", "LINK", "WETH", 2.2e6, 0.7e6, 1_100, "2021-09-01T05:31:02Z", { labels: V3, fee: "0.3%" });
pool("arbitrum", "uniswap", "uniswap_v3_arbitrum", "UNI", "WETH", 0.55e6, 0.12e6, 600, "2021-09-01T06:02:55Z", { labels: V3, fee: "0.3%" });
pool("arbitrum", "balancer", "balancer_arbitrum", "WETH", "USDC", 1.3e6, 0.3e6, 1_500, "2023-08-01T11:11:11Z", { gtNullTraders: true });
pool("arbitrum", "sushiswap", "sushiswap-arbitrum", "ARB", "USDT", 700, 80, 25, "2023-04-01T17:52:36Z", { kind: "dust" });
// optimism ------------------------------------------------------------------------------------------------
pool("optimism", "velodrome", "velodrome-finance-v2", "WETH", "USDC", 8.2e6, 11e6, 1_200, "2023-06-15T18:05:27Z");
pool("optimism", "uniswap", "uniswap_v3_optimism", "WETH", "USDC", 4.1e6, 9e6, 1_600, "2023-11-01T09:39:50Z", { labels: V3, fee: "0.05%" });
pool("optimism", "velodrome", "velodrome-finance-v2", "OP", "USDC", 6.1e6, 3.2e6, 700, "2023-06-15T18:21:44Z");
pool("optimism", "uniswap", "uniswap_v3_optimism", "OP", "WETH", 3.1e6, 1.9e6, 800, "2022-06-01T12:27:09Z", { labels: V3, fee: "0.3%" });
pool("optimism", "uniswap", "uniswap_v3_optimism", "WBTC", "WETH", 1.6e6, 0.9e6, 4_000, "2021-11-11T15:16:33Z", { labels: V3, fee: "0.05%" });
// polygon -------------------------------------------------------------------------------------------------
pool("polygon", "quickswap", "quickswap", "WPOL", "USDC", 5.2e6, 2.4e6, 500, "2023-10-01T07:07:07Z");
pool("polygon", "uniswap", "uniswap_v3_polygon_pos", "WPOL", "USDT", 2.3e6, 1.6e6, 400, "2022-01-03T10:44:18Z", { labels: V3, fee: "0.05%" });
pool("polygon", "uniswap", "uniswap_v3_polygon_pos", "WETH", "USDC", 3.6e6, 4.1e6, 900, "2023-10-15T21:14:40Z", { labels: V3, fee: "0.05%" });
pool("polygon", "quickswap", "quickswap", "WBTC", "USDC", 1.9e6, 0.8e6, 1_800, "2021-06-01T19:58:23Z");
// bsc -----------------------------------------------------------------------------------------------------
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "WBNB", "USDT", 42e6, 65e6, 1_800, "2023-04-03T08:41:36Z", { labels: V3, fee: "0.01%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "WBNB", "USDT", 26e6, 12e6, 600, "2021-04-23T10:14:51Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "WBNB", "USDC", 11e6, 14e6, 1_200, "2023-04-03T08:52:10Z", { labels: V3, fee: "0.05%" });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "BTCB", "USDT", 21e6, 28e6, 4_000, "2023-04-03T09:01:19Z", { labels: V3, fee: "0.05%" });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "BTCB", "WBNB", 10e6, 8e6, 3_000, "2023-04-03T09:07:45Z", { labels: V3, fee: "0.05%" });
pool("bsc", "squadswap", "squadswap", "BTCB", "WBNB", 60.88, 4.78, 0.075, "2025-11-11T22:43:28Z", {
  address: "0x02259FDbF99Ea59e3Bb6589f67e99C0A6322AfF7",
  labels: V3,
  kind: "dust",
  dsAbsurdChange24h: 3.725857251510287e42,
});
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "ETH", "USDT", 10.5e6, 15e6, 2_000, "2023-04-03T09:15:02Z", { labels: V3, fee: "0.05%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "ETH", "WBNB", 4.2e6, 1.1e6, 800, "2020-09-20T06:33:17Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "XRP", "USDT", 3.2e6, 2.5e6, 600, "2023-05-01T12:00:26Z", { labels: V3, fee: "0.25%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "XRP", "WBNB", 1.1e6, 0.4e6, 300, "2020-11-10T14:29:41Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "ADA", "WBNB", 2.1e6, 0.6e6, 300, "2020-10-01T03:48:52Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "ADA", "USDT", 1.4e6, 0.9e6, 400, "2023-05-02T07:19:33Z", { labels: V3, fee: "0.25%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "DOGE", "WBNB", 3.1e6, 1.1e6, 350, "2021-01-28T19:24:05Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "DOGE", "USDT", 1.2e6, 1.5e6, 500, "2023-05-02T07:25:48Z", { labels: V3, fee: "0.25%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "DOT", "WBNB", 1.05e6, 0.25e6, 250, "2020-09-25T11:37:14Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "LTC", "WBNB", 0.8e6, 0.2e6, 300, "2020-10-05T16:46:29Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "LTC", "USDT", 0.55e6, 0.35e6, 400, "2023-05-03T10:51:02Z", { labels: V3, fee: "0.25%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "LINK", "WBNB", 0.62e6, 0.15e6, 300, "2020-09-22T20:12:38Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "TRX", "USDT", 0.85e6, 0.5e6, 400, "2023-05-04T04:30:19Z", { labels: V3, fee: "0.25%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "ATOM", "WBNB", 0.42e6, 0.08e6, 200, "2021-02-18T13:03:27Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "NEAR", "WBNB", 0.31e6, 0.06e6, 180, "2021-03-15T09:41:56Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap-v3-bsc", "SOL", "USDT", 1.5e6, 2.2e6, 700, "2023-05-04T05:12:40Z", { labels: V3, fee: "0.25%" });
pool("bsc", "pancakeswap", "pancakeswap_v2", "AVAX", "WBNB", 0.36e6, 0.07e6, 200, "2021-03-02T17:55:23Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "SHIB", "WBNB", 0.33e6, 0.05e6, 150, "2021-05-10T22:08:14Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "Cake", "WBNB", 22e6, 6e6, 400, "2021-04-23T10:13:37Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "fake:BTC", "WBNB", 900, 300, 20, "2025-01-05T06:06:06Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "fake:PEPE", "WBNB", 1.25e6, 0.9e6, 250, "2024-11-30T23:41:12Z", { labels: V2 });
pool("bsc", "pancakeswap", "pancakeswap_v2", "ETH", "fake:USDT", 2_600, 700, 35, "2025-05-17T12:12:45Z", { labels: V2, nativeRatio: 3_000 });
// avalanche -----------------------------------------------------------------------------------------------
pool("avalanche", "traderjoe", "traderjoe-v2-1-avalanche", "WAVAX", "USDC", 15e6, 21e6, 600, "2023-01-11T15:58:26Z", { labels: ["v2.1"] });
pool("avalanche", "traderjoe", "traderjoe-v2-1-avalanche", "WAVAX", "USDt", 5.2e6, 4.5e6, 500, "2023-01-11T16:04:10Z", { labels: ["v2.1"] });
pool("avalanche", "traderjoe", "traderjoe-v2-1-avalanche", "BTC.b", "WAVAX", 4.1e6, 2.8e6, 1_500, "2023-01-12T09:27:51Z", { labels: ["v2.1"] });
pool("avalanche", "traderjoe", "traderjoe-v2-1-avalanche", "BTC.b", "USDC", 5.3e6, 4.1e6, 2_000, "2023-01-12T09:40:06Z", { labels: ["v2.1"] });
pool("avalanche", "pangolin", "pangolin", "WETH.e", "WAVAX", 2.9e6, 0.6e6, 700, "2021-08-12T14:22:30Z");
pool("avalanche", "traderjoe", "traderjoe-v2-1-avalanche", "WETH.e", "USDC", 1.9e6, 0.8e6, 900, "2023-01-13T18:15:54Z", { labels: ["v2.1"] });
// solana --------------------------------------------------------------------------------------------------
pool("solana", "raydium", "raydium", "SOL", "USDC", 12.5e6, 26e6, 450, "2021-04-13T10:17:43Z", { address: "58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2" });
pool("solana", "orca", "orca", "SOL", "USDC", 31e6, 155e6, 900, "2022-03-10T05:31:08Z", { address: "HJPjoWUrhoZzkNfRpHuieeFk9WcZWjwy6PBjZ81ngndJ", labels: ["wp"] });
pool("solana", "raydium", "raydium-clmm", "SOL", "USDT", 5.2e6, 32e6, 800, "2022-08-20T12:48:02Z", { labels: ["CLMM"] });
pool("solana", "meteora", "meteora", "SOL", "USDC", 4.1e6, 48e6, 400, "2024-01-20T08:00:31Z", { labels: ["DLMM"] });
pool("solana", "raydium", "raydium", "$WIF", "SOL", 8.5e6, 18e6, 350, "2023-11-20T16:30:51Z");
pool("solana", "raydium", "raydium", "Bonk", "SOL", 6.2e6, 4.3e6, 150, "2022-12-29T21:44:18Z");
pool("solana", "raydium", "raydium", "SOL", "Bonk", 42e3, 11e3, 80, "2023-01-04T11:20:44Z", { kind: "exotic_quote", devBp: 90 });
pool("solana", "fluxbeam", "fluxbeam", "SOL", "USDC", 250, 40, 8, "2024-03-01T02:02:58Z", { kind: "dust" });
pool("solana", "raydium", "raydium", "fake:SOL", "USDC", 15e3, 180e3, 90, "2025-08-30T19:46:27Z");
pool("solana", "raydium", "raydium", "MOTH", "USDC", 62e3, 9e3, 60, { ageMs: 58 * DAY_MS + 18_245_000 });

/** Every simulated pool, in table order. */
export const SIM_DEX_POOLS: readonly SimDexPool[] = pools;

/** Canonical (real) tokens of catalogue symbol `symbol` (uppercase), on every chain. */
export function simDexCanonicalTokens(symbol: string): readonly SimDexToken[] {
  const s = symbol.toUpperCase();
  return tokens.filter((t) => t.role === "canonical" && t.asset === s);
}

/** Look-alike (scam) tokens: real symbols at fake addresses. */
export const SIM_DEX_LOOKALIKE_TOKENS: readonly SimDexToken[] = tokens.filter((t) => t.role === "lookalike");

const EVM_RE = /^0x[0-9a-fA-F]{40}$/;

/** Address equality as the venues apply it: case-insensitive for EVM, exact otherwise. */
export function sameAddress(a: string, b: string): boolean {
  if (EVM_RE.test(a) && EVM_RE.test(b)) return a.toLowerCase() === b.toLowerCase();
  return a === b;
}

/** The sim chain of a DexScreener chain id / GeckoTerminal network id, or undefined. */
export function chainOfVenueId(venue: "dexscreener" | "geckoterminal", id: string): SimDexChain | undefined {
  return SIM_DEX_CHAIN_KEYS.find((c) => SIM_DEX_CHAINS[c][venue] === id);
}

/** Tokens of `chain` at `address` (several only if the table reuses an address, which it does not). */
export function simDexTokenAt(chain: SimDexChain, address: string): SimDexToken | undefined {
  return tokens.find((t) => t.chain === chain && sameAddress(t.address, address));
}

/** Pools of `chain` where the token at `address` is base or quote. */
export function simDexPoolsOfToken(chain: SimDexChain, address: string): SimDexPool[] {
  return pools.filter((p) => p.chain === chain && (sameAddress(p.base.address, address) || sameAddress(p.quote.address, address)));
}

/** Pool of `chain` at `address`, or undefined. */
export function simDexPoolAt(chain: SimDexChain, address: string): SimDexPool | undefined {
  return pools.find((p) => p.chain === chain && sameAddress(p.address, address));
}
