/**
 * Two answer headers every HTTP server of ours sets where they apply. `nosniff`: a browser never
 * runs an answer as anything other than its declared type. `no-store`: an answer that shows a
 * secret (a key, a webhook secret, a CSRF token) is kept by no browser or proxy cache.
 */
export const NOSNIFF = ['x-content-type-options', 'nosniff'] as const;
export const NO_STORE = ['cache-control', 'no-store'] as const;
