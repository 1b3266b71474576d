// The operator console: built into dist/console (served at /console/ by the service, see
// src/admin/console/serve-console.ts). Everything is bundled: no CDN, no inline script or style.
// React's JSX is compiled by Vite's own transformer (oxc), automatic runtime: no Babel plugin.
// Ant Design runs in its zero-runtime mode (ConfigProvider theme.zeroRuntime): its styles are the
// stylesheet antd extracts at build time (antd/dist/antd.css), bundled into one CSS file here, so
// the CSP needs no 'unsafe-inline' for styles.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Inline assets would need data: URLs in the CSP; files keep it strict.
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 4000,
    rolldownOptions: {
      // antd's modules open with "use client" (for React Server Components): meaningless in a bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
