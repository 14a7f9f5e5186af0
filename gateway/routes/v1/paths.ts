/** Where the routes that mirror the official Business API v1.3 live, under /v1 (the spec's versioning point 2). */
export const BUSINESS = '/vplat/v1.3/business';
