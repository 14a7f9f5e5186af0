import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

// The gateway serves the build under /console/; `vite dev` proxies the API to a local `vps serve`.
export default defineConfig({
  root,
  base: '/console/',
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
  server: {
    proxy: {
      '/v1': 'http://127.0.0.1:8080',
      '/console/api': 'http://127.0.0.1:8080',
      '/console/config.json': 'http://127.0.0.1:8080',
    },
  },
});
