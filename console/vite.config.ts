// The console's build (docs/console.md): console/ → dist/console-assets, served under /console with
// hashed asset names and no inline script (the CSP allows only 'self').
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: fileURLToPath(new URL('../dist/console-assets', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // The preload polyfill would be fine under the CSP, but nothing needs it (modern browsers).
    modulePreload: { polyfill: false },
    sourcemap: false,
    // No data: URLs for small assets: every asset is a hashed file.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
