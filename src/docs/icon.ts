/**
 * The service icon (`/favicon.svg`): named as `resource.iconUrl` in every 402 (x402 Bazaar) and found by
 * discovery crawlers that look for a favicon. A candlestick chart on a dark tile.
 */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
<rect width="64" height="64" rx="14" fill="#0f172a"/>
<path d="M18 14v36M32 10v44M46 18v30" stroke="#94a3b8" stroke-width="3" stroke-linecap="round"/>
<rect x="12" y="24" width="12" height="18" rx="2" fill="#ef4444"/>
<rect x="26" y="18" width="12" height="22" rx="2" fill="#22c55e"/>
<rect x="40" y="26" width="12" height="14" rx="2" fill="#22c55e"/>
</svg>
`;
