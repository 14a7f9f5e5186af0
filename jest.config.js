/** The suite runs TypeScript through swc (types are checked by `npm run typecheck`), against a real
 * Postgres database and a Temporal dev server that the global setup prepares once per run. */

/**
 * Packages published only as ES modules. Node loads them from our CommonJS code by itself
 * (`require` of an ES module); Jest's module system cannot, so swc turns them into CommonJS here.
 */
const ESM_ONLY_PACKAGES = [
  'file-type',
  'strtok3',
  'token-types',
  '@tokenizer',
  'uint8array-extras',
  '@borewit',
  'commander',
  'eventsource',
  'eventsource-parser',
  'cookie',
  'svix',
];

const swc = ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': swc, [`/node_modules/(${ESM_ONLY_PACKAGES.join('|')})/.+\\.m?js$`]: swc },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
