/**
 * Normalised DEX records shared by the DexScreener and GeckoTerminal adapters.
 * - `chain` is our canonical chain key (see {@link DEX_CHAINS}); venue ids (`ethereum`/`eth`,
 *   `polygon`/`polygon_pos`) never leave the adapters.
 * - Token addresses are compared case-insensitively for EVM chains and exactly elsewhere (Solana).
 * - Prices are USD; volumes and liquidity are USD; times are epoch milliseconds.
 */

/** Chains the service aggregates, with each venue's id for it. */
export const DEX_CHAINS = {
  ethereum: { dexscreener: "ethereum", geckoterminal: "eth" },
  base: { dexscreener: "base", geckoterminal: "base" },
  arbitrum: { dexscreener: "arbitrum", geckoterminal: "arbitrum" },
  optimism: { dexscreener: "optimism", geckoterminal: "optimism" },
  polygon: { dexscreener: "polygon", geckoterminal: "polygon_pos" },
  bsc: { dexscreener: "bsc", geckoterminal: "bsc" },
  avalanche: { dexscreener: "avalanche", geckoterminal: "avax" },
  solana: { dexscreener: "solana", geckoterminal: "solana" },
} as const;

/** A canonical chain key. */
export type DexChain = keyof typeof DEX_CHAINS;

/** A token as a pool reports it. */
export interface DexToken {
  address: string;
  symbol: string;
  name: string;
}

/** One liquidity pool (pair) as reported by a DEX data source. */
export interface DexPool {
  source: "dexscreener" | "geckoterminal";
  chain: DexChain;
  /** DEX id (`uniswap`, `pancakeswap`, `raydium`, ...). */
  dex: string;
  pairAddress: string;
  baseToken: DexToken;
  quoteToken: DexToken;
  /** USD price of ONE base token; null when the source sends none. */
  priceUsd: number | null;
  /** Price of one base token in quote tokens; null when not sent. */
  priceNative: number | null;
  liquidityUsd: number | null;
  volume24hUsd: number | null;
  /** Base-token price change over 24h, pct; null when not sent. */
  priceChange24hPct: number | null;
  /** Swaps in the last 24h; null when not sent. */
  txns24h: { buys: number; sells: number } | null;
  /** Swap fee in basis points when the source states it (GeckoTerminal pool names, e.g. "0.05%"); else null. */
  feeBps: number | null;
  /** Pool creation time, when sent. */
  createdAt: number | null;
}

/** One OHLCV candle of a pool, USD (GeckoTerminal `currency=usd`, base token). */
export interface PoolCandle {
  /** Candle start, epoch ms. */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volumeUsd: number;
}

/** GeckoTerminal OHLCV timeframes and aggregates (pool OHLCV in https://api.geckoterminal.com/docs/index.html). */
export type OhlcvTimeframe = { timeframe: "minute"; aggregate: 1 | 5 | 15 } | { timeframe: "hour"; aggregate: 1 | 4 | 12 } | { timeframe: "day"; aggregate: 1 };
