import { defineConfig } from 'drizzle-kit';

// Generates SQL migrations from the schema; they are reviewed, committed and applied on start.
export default defineConfig({
  dialect: 'postgresql',
  schema: './core/db/schema/index.ts',
  out: './core/db/migrations',
});
