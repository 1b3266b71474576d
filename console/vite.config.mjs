// The operator console: built into dist/console (served at /console/ by the service, see
// src/admin/console/serve-console.ts). Everything is bundled: no CDN, no inline script or style.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Inline assets would need data: URLs in the CSP; files keep it strict.
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
});
