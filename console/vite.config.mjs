// The operator console: built into dist/console (served at /console/ by the service, see
// src/admin/console/serve-console.ts). Everything is bundled: no CDN, no inline script or style.
// React's JSX is compiled by Vite's own transformer (oxc), automatic runtime: no Babel plugin.
// Ant Design runs in its zero-runtime mode (ConfigProvider theme.zeroRuntime): its styles are
// extracted here, before the build (antd-style.mjs, @ant-design/static-style-extract), into
// src/generated/antd.css, which main.tsx imports and Vite bundles into one CSS file, so the CSP
// needs no 'unsafe-inline' for styles.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { writeAntdStyle } from './antd-style.mjs';
// The theme the app renders with (main.tsx): the same CSS-variable scope, no hashed class names.
import ANTD_THEME from './src/antd-theme.json' with { type: 'json' };

writeAntdStyle(fileURLToPath(new URL('./src/generated/antd.css', import.meta.url)), ANTD_THEME);

const CSP_SAFE_SCROLLBAR = fileURLToPath(new URL('./csp/get-scroll-bar-size.mjs', import.meta.url));

/** Puts console/csp/get-scroll-bar-size.mjs in place of @rc-component/util's, which injects a <style> the CSP refuses. */
const cspSafeScrollbar = {
  name: 'csp-safe-scrollbar-measure',
  enforce: 'pre',
  async resolveId(source, importer, options) {
    if (!/getScrollBarSize(\.js)?$/.test(source) || !importer?.includes('@rc-component/util')) return null;
    const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
    return resolved?.id.includes('@rc-component/util') ? CSP_SAFE_SCROLLBAR : null;
  },
};

export default defineConfig({
  plugins: [cspSafeScrollbar],
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
