// Lint for what the type checker does not catch: unawaited promises (an unhandled rejection can
// crash a process) and, under workflows/, any import that could do I/O and break determinism.
import tseslint from 'typescript-eslint';

const IO_MODULES = [
  'node:*',
  'fs',
  'fs/*',
  'http',
  'https',
  'net',
  'dns',
  'child_process',
  'crypto',
  'os',
  'path',
  'postgres',
  'drizzle-orm',
  'drizzle-orm/*',
  'undici',
  'fastify',
  '@connectrpc/*',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/activity',
  '@electric-sql/pglite',
  'pino',
];

export default tseslint.config(
  { ignores: ['node_modules/', 'gen/', '.data/', '**/dist/', 'test/fixtures/', 'coverage/', 'bin/', 'test-artifacts/'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [{ group: IO_MODULES, message: 'workflows must stay deterministic: do I/O in activities', allowTypeImports: true }],
          paths: [{ name: '../activities', message: 'import activities as types only', allowTypeImports: true }],
        },
      ],
    },
  },
);
