/**
 * The assets marketgate serves, keyed by canonical base symbol (uppercase, e.g. `BTC`).
 *
 * One entry per asset; venue identifiers live here so that symbols are mapped once.
 * - `coingeckoId`: CoinGecko coin id used by `/simple/price`, `/coins/{id}` and `/coins/{id}/market_chart`.
 */
export interface AssetInfo {
  /** Canonical base symbol, uppercase (`BTC`). */
  readonly symbol: string;
  /** Human name as CoinGecko lists it. */
  readonly name: string;
  /** CoinGecko coin id (`bitcoin`). */
  readonly coingeckoId: string;
}

const ASSETS: readonly AssetInfo[] = [
  { symbol: "BTC", name: "Bitcoin", coingeckoId: "bitcoin" },
  { symbol: "ETH", name: "Ethereum", coingeckoId: "ethereum" },
  { symbol: "SOL", name: "Solana", coingeckoId: "solana" },
  { symbol: "XRP", name: "XRP", coingeckoId: "ripple" },
  { symbol: "BNB", name: "BNB", coingeckoId: "binancecoin" },
  { symbol: "ADA", name: "Cardano", coingeckoId: "cardano" },
  { symbol: "DOGE", name: "Dogecoin", coingeckoId: "dogecoin" },
  { symbol: "AVAX", name: "Avalanche", coingeckoId: "avalanche-2" },
  { symbol: "DOT", name: "Polkadot", coingeckoId: "polkadot" },
  { symbol: "LINK", name: "Chainlink", coingeckoId: "chainlink" },
  { symbol: "MATIC", name: "Polygon", coingeckoId: "matic-network" },
  { symbol: "UNI", name: "Uniswap", coingeckoId: "uniswap" },
  { symbol: "APT", name: "Aptos", coingeckoId: "aptos" },
  { symbol: "ARB", name: "Arbitrum", coingeckoId: "arbitrum" },
  { symbol: "OP", name: "Optimism", coingeckoId: "optimism" },
  { symbol: "SUI", name: "Sui", coingeckoId: "sui" },
  { symbol: "NEAR", name: "NEAR Protocol", coingeckoId: "near" },
  { symbol: "ATOM", name: "Cosmos Hub", coingeckoId: "cosmos" },
  { symbol: "PEPE", name: "Pepe", coingeckoId: "pepe" },
  { symbol: "SHIB", name: "Shiba Inu", coingeckoId: "shiba-inu" },
  { symbol: "TON", name: "Toncoin", coingeckoId: "the-open-network" },
  { symbol: "TRX", name: "TRON", coingeckoId: "tron" },
  { symbol: "LTC", name: "Litecoin", coingeckoId: "litecoin" },
];

const BY_SYMBOL = new Map(ASSETS.map((a) => [a.symbol, a]));
const BY_COINGECKO_ID = new Map(ASSETS.map((a) => [a.coingeckoId, a]));

/** Every supported asset, in catalogue order. */
export function listAssets(): readonly AssetInfo[] {
  return ASSETS;
}

/** Looks up an asset by symbol, case-insensitively (`btc`, `BTC`). Returns undefined when unsupported. */
export function assetBySymbol(symbol: string): AssetInfo | undefined {
  return BY_SYMBOL.get(symbol.trim().toUpperCase());
}

/**
 * Resolves a CoinGecko id (`bitcoin`) or, as a convenience, a symbol (`btc`) to an asset.
 * Returns undefined when neither matches the catalogue.
 */
export function assetByIdOrSymbol(idOrSymbol: string): AssetInfo | undefined {
  const key = idOrSymbol.trim().toLowerCase();
  return BY_COINGECKO_ID.get(key) ?? assetBySymbol(key);
}
