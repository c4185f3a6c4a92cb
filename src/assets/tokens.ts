import type { DexChain, DexPool } from "../venues/dex/types.js";
import { perCoin } from "../venues/wire.js";
import { assetBySymbol } from "./catalogue.js";

/*
 * Curated canonical-token registry: which token contracts represent each catalogue asset on each chain we
 * aggregate, and which tokens count as quote assets. DEX data sources list thousands of look-alikes
 * ("ETH", "WETH", "XRP2.0", "PepePAD" with symbol PEPE); only the contracts below ever enter an aggregate.
 *
 * Every address was checked against at least one of these public sources (tags used in the comments):
 * - [UNI]    Uniswap Labs default token list, npm `@uniswap/default-token-list@22.21.0`,
 *            build/uniswap-default.tokenlist.json (2026-09-23), or its source repo Uniswap/default-token-list src/tokens/*.json
 * - [UNI-IF] Uniswap/interface @ 55c403afe7f2f9e356d42c58180f455aa70f1a3c, packages/uniswap/src/constants/tokens.ts
 * - [AAVE]   bgd-labs/aave-address-book @ f61c97628307d387ca93a78578970fe6db885029, src/AaveV3<Network>.sol (`*_UNDERLYING`)
 * - [OPL]    ethereum-optimism/ethereum-optimism.github.io @ 9db0b0037010c0f0e286a5812096f9a08dcc98d1, data/<SYMBOL>/data.json
 *            (Superchain token list: Ethereum, OP Mainnet and Base addresses)
 * - [CAKE]   pancakeswap/token-list @ e7ba44e2cf42ee74f6a737b03d7b4f3578684eee, src/tokens/pancakeswap-extended.json;
 *            [CAKE-CG] the same repo's src/tokens/coingecko.json (CoinGecko's BNB Chain list)
 * - [TW]     trustwallet/assets, blockchains/<chain>/assets/<address>/info.json (e.g. "Binance-Peg Cardano Token …
 *            pegged to Cardano (ADA) at a ratio of 1:1")
 * - [CL]     Chainlink docs: smartcontractkit/documentation src/content/resources/link-token-contracts.mdx and the CCIP
 *            directory docs.chain.link/ccip/directory/mainnet/token/LINK
 * - [DRIFT]  drift-labs/protocol-v2 sdk/src/constants/spotMarkets.ts (Solana mints)
 *
 * Deliberately left out (no entry rather than a guess):
 * - APT, SUI, NEAR-native, ATOM-native, TON, TRX: their home chains are not among DEX_CHAINS.
 * - TRX on BNB Chain: two contracts (0x85EAC5Ac… "TRON" old, 0xCE7de646… "Tron V2"), and CoinGecko tracks the
 *   BEP-20 as a separate coin ("TRON (BSC)"), not as TRX.
 * - TON on BNB Chain (0x76A797A5…): a TON-bridge wrapper ("Gram", symbol TONCOIN per [TW]), not a Binance peg.
 * - Bridged copies of meme tokens (PEPE, SHIB on Arbitrum/Optimism/Base) and Wormhole SOL on EVM chains: real
 *   but thin; the liquidity floor would reject them anyway.
 */

/** A token contract that represents a catalogue asset on one chain. `symbol` is the contract's own symbol (`WETH`). */
export interface CanonicalToken {
  chain: DexChain;
  address: string;
  symbol: string;
}

/** A token accepted as the other side of a pool; `stable` for USD stablecoins. */
export interface QuoteAsset {
  address: string;
  symbol: string;
  stable: boolean;
}

/** Pools with less USD liquidity than this never enter an aggregate. */
export const MIN_LIQUIDITY_USD = 50_000;

const t = (chain: DexChain, address: string, symbol: string): CanonicalToken => ({ chain, address, symbol });

/** Canonical tokens per catalogue symbol. Symbols absent here have no verified DEX representation on our chains. */
export const CANONICAL_TOKENS: Readonly<Record<string, readonly CanonicalToken[]>> = {
  BTC: [
    t("ethereum", "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599", "WBTC"), // [UNI] [AAVE Ethereum] [OPL WBTC]
    t("ethereum", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", "cbBTC"), // [UNI] [AAVE Ethereum cbBTC]
    t("base", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", "cbBTC"), // [UNI base] [AAVE Base cbBTC]
    t("arbitrum", "0x2f2a2543B76A4166549F7aaB2e75Bef0aefC5B0f", "WBTC"), // [UNI] [UNI-IF WBTC_ARBITRUM_ONE] [AAVE Arbitrum]
    t("arbitrum", "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", "cbBTC"), // [UNI arbitrum]
    t("optimism", "0x68f180fcCe6836688e9084f035309E29Bf0A2095", "WBTC"), // [UNI] [UNI-IF WBTC_OPTIMISM] [AAVE Optimism] [OPL]
    t("polygon", "0x1BFD67037B42Cf73acF2047067bd4F2C47D9BfD6", "WBTC"), // [UNI] [UNI-IF WBTC_POLYGON] [AAVE Polygon]
    t("bsc", "0x7130d2A12B9BCbFAe4f2634d864A1Ee1Ce3Ead9c", "BTCB"), // [UNI-IF BTC_BSC] [AAVE BNB] [CAKE "Binance Pegged Bitcoin"]
    t("avalanche", "0x152b9d0FdC40C096757F570A51E494bd4b943E50", "BTC.b"), // [AAVE Avalanche BTCb]
    t("avalanche", "0x50b7545627a5162F82A992c33b87aDc75187B218", "WBTC.e"), // [UNI] [AAVE Avalanche WBTCe]
    t("solana", "cbbtcf3aa214zXHbiAZQwf4122FBYbraNdFqgw4iMij", "cbBTC"), // [DRIFT cbBTC, market 27]
    t("solana", "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh", "WBTC"), // [UNI "Wrapped BTC (Wormhole)"] [DRIFT wBTC]
    t("solana", "5XZw2LKTyrfvfiskJ78AMpackRjPcyCif1WhUsPDuVqQ", "WBTC"), // [UNI "Wrapped Bitcoin"]
  ],
  ETH: [
    t("ethereum", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "WETH"), // [UNI] [AAVE Ethereum] [OPL WETH]
    t("arbitrum", "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", "WETH"), // [UNI] [UNI-IF] [AAVE Arbitrum]
    t("optimism", "0x4200000000000000000000000000000000000006", "WETH"), // [UNI] [UNI-IF] [AAVE Optimism] [OPL]
    t("base", "0x4200000000000000000000000000000000000006", "WETH"), // [UNI] [UNI-IF] [AAVE Base] [OPL]
    t("polygon", "0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619", "WETH"), // bridged WETH: [UNI] [UNI-IF WETH_POLYGON] [AAVE Polygon]
    t("bsc", "0x2170Ed0880ac9A755fd29B2688956BD959F933F8", "ETH"), // Binance-Peg ETH: [UNI-IF ETH_BSC] [AAVE BNB] [CAKE]
    t("avalanche", "0x49D5c2BdFfac6CE2BFdB6640F4F80f226bc10bAB", "WETH.e"), // [UNI] [UNI-IF WETH_AVALANCHE] [AAVE Avalanche WETHe]
    t("solana", "7vfCXTUXx5WJV5JADk17DUJ4ksgau7utNKj4b963voxs", "WETH"), // Wormhole: [UNI] [DRIFT wETH]
  ],
  SOL: [
    t("solana", "So11111111111111111111111111111111111111112", "SOL"), // wrapped SOL: [UNI "Wrapped SOL"] [DRIFT WRAPPED_SOL_MINT]
  ],
  BNB: [
    t("bsc", "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c", "WBNB"), // [UNI] [UNI-IF] [AAVE BNB] [CAKE]
  ],
  XRP: [
    t("bsc", "0x1D2F0da169ceB9fC7B3144628dB156f3F6c60dBE", "XRP"), // Binance-Peg XRP: [CAKE] [CAKE-CG] [TW]
  ],
  ADA: [
    t("bsc", "0x3EE2200Efb3400fAbB9AacF31297cBdD1d435D47", "ADA"), // Binance-Peg Cardano: [CAKE] [CAKE-CG] [TW]
  ],
  DOGE: [
    t("bsc", "0xbA2aE424d960c26247Dd6c32edC70B295c744C43", "DOGE"), // Binance-Peg Dogecoin: [CAKE] [CAKE-CG] [TW]
  ],
  AVAX: [
    t("avalanche", "0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7", "WAVAX"), // [UNI] [UNI-IF] [AAVE Avalanche]
    t("bsc", "0x1CE0c2827e2eF14D5C4f29a091d735A204794041", "AVAX"), // Binance-Peg Avalanche: [CAKE-CG] [TW]
  ],
  DOT: [
    t("bsc", "0x7083609fCE4d1d8Dc0C979AAb8c869Ea2C873402", "DOT"), // Binance-Peg Polkadot: [CAKE] [CAKE-CG] [TW]
  ],
  LINK: [
    t("ethereum", "0x514910771AF9Ca656af840dff83E8264EcF986CA", "LINK"), // [UNI] [AAVE Ethereum] [CL] [OPL]
    t("arbitrum", "0xf97f4df75117a78c1A5a0DBb814Af92458539FB4", "LINK"), // [UNI] [AAVE Arbitrum] [CL]
    t("optimism", "0x350a791Bfc2C21F9Ed5d10980Dad2e2638ffa7f6", "LINK"), // [UNI] [AAVE Optimism] [CL] [OPL]
    t("base", "0x88Fb150BDc53A65fe94Dea0c9BA0a6dAf8C6e196", "LINK"), // [CL CCIP directory, Base]
    t("polygon", "0x53E0bca35eC356BD5ddDFebbD1Fc0fD03FaBad39", "LINK"), // PoS-bridged: [UNI] [AAVE Polygon]
    t("polygon", "0xb0897686c545045aFc77CF20eC7A532E3120E0F1", "LINK"), // ERC-677 (PegSwap 1:1): [CL]
    t("bsc", "0xF8A0BF9cF54Bb92F17374d9e9A321E6a111a51bD", "LINK"), // Binance-Peg: [UNI] [CAKE] [TW]
    t("bsc", "0x404460C6A5EdE2D891e8297795264fDe62ADBB75", "LINK"), // ERC-677 (PegSwap 1:1): [CL]
    t("avalanche", "0x5947BB275c521040051D82396192181b413227A3", "LINK.e"), // [UNI] [AAVE Avalanche LINKe] [CL]
    t("solana", "LinkhB3afbBKb2EQQu7s7umdZceV3wcvAUJhQAfQ23L", "LINK"), // [UNI solana "Chainlink"]
  ],
  MATIC: [
    t("ethereum", "0x7D1AfA7B718fb893dB30A3aBc0Cfc608AaCfeBB0", "MATIC"), // [UNI] [UNI-IF MATIC_MAINNET]
    t("ethereum", "0x455e53CBB86018Ac2B8092FdCd39d8444aFFC3F6", "POL"), // MATIC's 1:1 successor: [UNI "Polygon Ecosystem Token"]
    t("polygon", "0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270", "WPOL"), // wrapped native (was WMATIC): [UNI] [UNI-IF] [AAVE Polygon WPOL]
    t("bsc", "0xCC42724C6683B7E57334c4E856f4c9965ED682bD", "MATIC"), // Binance-Peg: [UNI bsc] [CAKE-CG] [TW]
  ],
  UNI: [
    t("ethereum", "0x1f9840a85d5aF5bf1D1762F925BDADdC4201F984", "UNI"), // [UNI] [AAVE Ethereum] [OPL]
    t("arbitrum", "0xFa7F8980b0f1E64A2062791cc3b0871572f1F7f0", "UNI"), // [UNI arbitrum]
    t("optimism", "0x6fd9d7AD17242c41f7131d257212c54A0e816691", "UNI"), // [UNI] [OPL]
    t("base", "0xc3De830EA07524a0761646a6a4e4be0e114a3C83", "UNI"), // [UNI] [OPL]
    t("polygon", "0xb33EaAd8d922B1083446DC23f610c2567fB5180f", "UNI"), // [UNI]
    t("bsc", "0xBf5140A22578168FD562DCcF235E5D43A02ce9B1", "UNI"), // Binance-Peg Uniswap: [UNI] [CAKE] [TW]
    t("avalanche", "0x8eBAf22B6F053dFFeaf46f4Dd9eFA95D89ba8580", "UNI.e"), // [UNI]
  ],
  ARB: [
    t("arbitrum", "0x912CE59144191C1204E64559FE8253a0e49E6548", "ARB"), // [UNI] [UNI-IF ARB] [AAVE Arbitrum]
    t("ethereum", "0xB50721BCf8d664c30412Cfbc6cf7a15145234ad1", "ARB"), // [UNI mainnet]
  ],
  OP: [
    t("optimism", "0x4200000000000000000000000000000000000042", "OP"), // [UNI] [UNI-IF OP] [AAVE Optimism] [OPL]
  ],
  NEAR: [
    t("bsc", "0x1Fa4a73a3F0133f0025378af00236f3aBDEE5D63", "NEAR"), // Binance-Peg NEAR Protocol: [TW] [CAKE-CG]
  ],
  ATOM: [
    t("bsc", "0x0Eb3a705fc54725037CC9e008bDede697f62F335", "ATOM"), // Binance-Peg Cosmos: [CAKE] [CAKE-CG] [TW]
  ],
  PEPE: [
    t("ethereum", "0x6982508145454Ce325dDbE47a25d4ec3d2311933", "PEPE"), // [UNI] [OPL]
    t("bsc", "0x25d887Ce7a35172C62FeBFD67a1856F20FaEbB00", "PEPE"), // Binance-Peg PEPE: [CAKE]
  ],
  SHIB: [
    t("ethereum", "0x95aD61b0a150d79219dCF64E1E6Cc01f0B64C4cE", "SHIB"), // [UNI]
    t("bsc", "0x2859e4544C4bB03966803b044A93563Bd2D0DD4D", "SHIB"), // Binance-Peg SHIBA INU: [CAKE-CG] [TW]
  ],
  LTC: [
    t("bsc", "0x4338665CBB7B2485A8855A139b75D5e34AB0DB94", "LTC"), // Binance-Peg Litecoin: [CAKE] [CAKE-CG] [TW]
  ],
};

const q = (address: string, symbol: string, stable: boolean): QuoteAsset => ({ address, symbol, stable });

/** Quote assets per chain: USD stablecoins and the chain's major wrapped assets. */
export const QUOTE_ASSETS: Readonly<Record<DexChain, readonly QuoteAsset[]>> = {
  ethereum: [
    q("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "USDC", true), // [UNI] [AAVE] [OPL]
    q("0xdAC17F958D2ee523a2206206994597C13D831ec7", "USDT", true), // [UNI] [AAVE] [OPL]
    q("0x6B175474E89094C44Da98b954EedeAC495271d0F", "DAI", true), // [UNI] [AAVE] [OPL]
    q("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "WETH", false), // [UNI] [AAVE]
  ],
  base: [
    q("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USDC", true), // [UNI] [AAVE Base] [OPL]
    q("0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA", "USDbC", true), // [UNI] [AAVE Base]
    q("0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2", "USDT", true), // bridged: [OPL USDT base]
    q("0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb", "DAI", true), // [UNI] [OPL]
    q("0x4200000000000000000000000000000000000006", "WETH", false), // [UNI] [AAVE Base]
  ],
  arbitrum: [
    q("0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "USDC", true), // [UNI] [AAVE Arbitrum USDCn]
    q("0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8", "USDC.e", true), // [UNI] [AAVE Arbitrum USDC]
    q("0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", "USDT", true), // USDT0: [UNI] [AAVE Arbitrum]
    q("0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1", "DAI", true), // [UNI] [AAVE Arbitrum]
    q("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", "WETH", false), // [UNI] [AAVE Arbitrum]
  ],
  optimism: [
    q("0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85", "USDC", true), // [UNI] [AAVE Optimism USDCn] [OPL]
    q("0x7F5c764cBc14f9669B88837ca1490cCa17c31607", "USDC.e", true), // [UNI] [AAVE Optimism USDC]
    q("0x94b008aA00579c1307B0EF2c499aD98a8ce58e58", "USDT", true), // [UNI] [AAVE Optimism] [OPL]
    q("0x01bFF41798a0BcF287b996046Ca68b395DbC1071", "USDT0", true), // [UNI optimism]
    q("0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1", "DAI", true), // [UNI] [AAVE Optimism] [OPL]
    q("0x4200000000000000000000000000000000000006", "WETH", false), // [UNI] [AAVE Optimism]
  ],
  polygon: [
    q("0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "USDC", true), // [UNI] [AAVE Polygon USDCn]
    q("0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174", "USDC.e", true), // [UNI] [AAVE Polygon USDC]
    q("0xc2132D05D31c914a87C6611C10748AEb04B58e8F", "USDT", true), // [UNI] [AAVE Polygon USDT0]
    q("0x8f3Cf7ad23Cd3CaDbD9735AFf958023239c6A063", "DAI", true), // [UNI] [AAVE Polygon]
    q("0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619", "WETH", false), // [UNI] [AAVE Polygon]
    q("0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270", "WPOL", false), // [UNI] [AAVE Polygon WPOL]
  ],
  bsc: [
    q("0x55d398326f99059fF775485246999027B3197955", "USDT", true), // [UNI] [AAVE BNB] [CAKE]
    q("0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d", "USDC", true), // [UNI] [AAVE BNB] [CAKE]
    q("0xc5f0f7b66764F6ec8C8Dff7BA683102295E16409", "FDUSD", true), // [AAVE BNB] [CAKE]
    q("0xe9e7CEA3DedcA5984780Bafc599bD69ADd087D56", "BUSD", true), // [UNI] [UNI-IF BUSD_BSC] [CAKE]
    q("0x1AF3F329e8BE154074D8769D1FFa4eE058B1DBc3", "DAI", true), // [UNI] [UNI-IF DAI_BSC] [CAKE]
    q("0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c", "WBNB", false), // [UNI] [AAVE BNB] [CAKE]
    q("0x2170Ed0880ac9A755fd29B2688956BD959F933F8", "ETH", false), // [UNI-IF ETH_BSC] [AAVE BNB]
  ],
  avalanche: [
    q("0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", "USDC", true), // [UNI] [AAVE Avalanche]
    q("0xA7D7079b0FEaD91F3e65f86E8915Cb59c1a4C664", "USDC.e", true), // [TW avalanchec "USDC.e"]
    q("0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7", "USDt", true), // [UNI] [AAVE Avalanche USDt]
    q("0xc7198437980c041c805A1EDcbA50c1Ce5db95118", "USDT.e", true), // [TW avalanchec "USDT.e"]
    q("0xd586E7F844cEa2F87f50152665BCbc2C279D8d70", "DAI.e", true), // [UNI] [AAVE Avalanche DAIe]
    q("0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7", "WAVAX", false), // [UNI] [AAVE Avalanche]
  ],
  solana: [
    q("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "USDC", true), // [UNI] [DRIFT]
    q("Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", "USDT", true), // [UNI] [DRIFT]
    q("So11111111111111111111111111111111111111112", "SOL", false), // wrapped SOL: [UNI] [DRIFT]
  ],
};

/** Address key for comparisons: EVM addresses case-insensitively (checksum-agnostic), Solana exactly. */
export function addressKey(chain: DexChain, address: string): string {
  return chain === "solana" ? address.trim() : address.trim().toLowerCase();
}

/** True when `address` is well-formed for `chain`: 0x + 40 hex (EVM) or a 32–44 character base58 string (Solana). */
export function isWellFormedAddress(chain: DexChain, address: string): boolean {
  return chain === "solana" ? /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address) : /^0x[0-9a-fA-F]{40}$/.test(address);
}

const CANONICAL_INDEX: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(CANONICAL_TOKENS).map(([sym, list]) => [sym, new Set(list.map((c) => `${c.chain}:${addressKey(c.chain, c.address)}`))]),
);

const QUOTE_INDEX: ReadonlyMap<string, QuoteAsset> = new Map(
  (Object.entries(QUOTE_ASSETS) as Array<[DexChain, readonly QuoteAsset[]]>).flatMap(([chain, list]) => list.map((a) => [`${chain}:${addressKey(chain, a.address)}`, a] as const)),
);

/** The registry key of a symbol: the catalogue's canonical form when it knows the symbol, else trimmed uppercase. */
function symbolKey(symbol: string): string {
  return assetBySymbol(symbol)?.symbol ?? symbol.trim().toUpperCase();
}

/** The token contracts that represent `symbol` (case-insensitive) on the chains we aggregate; [] when none is registered. */
export function canonicalTokens(symbol: string): CanonicalToken[] {
  return (CANONICAL_TOKENS[symbolKey(symbol)] ?? []).map((c) => ({ ...c }));
}

/** True when `address` on `chain` is a registered canonical token of `symbol`. */
export function isCanonical(symbol: string, chain: DexChain, address: string): boolean {
  return CANONICAL_INDEX.get(symbolKey(symbol))?.has(`${chain}:${addressKey(chain, address)}`) ?? false;
}

/** The quote asset at `address` on `chain`, or undefined when it is not one. */
export function quoteAsset(chain: DexChain, address: string): { symbol: string; stable: boolean } | undefined {
  const a = QUOTE_INDEX.get(`${chain}:${addressKey(chain, address)}`);
  return a ? { symbol: a.symbol, stable: a.stable } : undefined;
}

/**
 * Decides whether `pool` may price `symbol`: one side must be a canonical token of `symbol` on the pool's
 * chain, the other side a known quote asset, and the pool's USD liquidity at least {@link MIN_LIQUIDITY_USD}
 * (unknown liquidity is rejected). Returns the side holding the canonical token, or undefined.
 * Look-alikes (a token named "ETH" or "WETH" at another address) never pass.
 */
export function acceptPool(symbol: string, pool: DexPool): { side: "base" | "quote" } | undefined {
  if (pool.liquidityUsd === null || !(pool.liquidityUsd >= MIN_LIQUIDITY_USD)) return undefined;
  const { chain, baseToken, quoteToken } = pool;
  if (isCanonical(symbol, chain, baseToken.address) && quoteAsset(chain, quoteToken.address)) return { side: "base" };
  if (isCanonical(symbol, chain, quoteToken.address) && quoteAsset(chain, baseToken.address)) return { side: "quote" };
  return undefined;
}

/**
 * USD price of the canonical token in `pool` on `side` (see {@link acceptPool}): the base side is `priceUsd`;
 * the quote side is `priceUsd / priceNative` (USD per base ÷ quote per base) when both are known and
 * positive. Null otherwise.
 */
export function poolPriceOf(pool: DexPool, side: "base" | "quote"): number | null {
  if (side === "base") return pool.priceUsd;
  const { priceUsd, priceNative } = pool;
  if (priceUsd === null || priceNative === null || !(priceNative > 0)) return null;
  return perCoin(priceUsd, priceNative);
}
