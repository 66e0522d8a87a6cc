import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';
import { ADMIN_PREFIX } from './main/contract/health.ts';
import { CONSOLE_CSP_META } from './main/contract/csp.ts';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const CSP_META = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"\s*\/?>/;

/**
 * Keeps the built console CSP-clean: the meta policy must equal the shared
 * one, and the output may hold no inline <script> or <style> (only
 * `<script src>` and `<link rel=stylesheet>`). In dev the meta tag is dropped,
 * because Vite's dev server injects an inline React Refresh preamble.
 */
function consoleCsp(): Plugin {
  return {
    name: 'gatehouse-console-csp',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        if (ctx.server) return html.replace(CSP_META, '');
        const meta = CSP_META.exec(html);
        if (!meta || meta[1] !== CONSOLE_CSP_META)
          throw new Error(
            'renderer/index.html: the CSP meta tag must equal CONSOLE_CSP_META from main/contract/csp.ts',
          );
        if (/<script(?![^>]*\bsrc=)[^>]*>/i.test(html))
          throw new Error('built console has an inline <script>; the CSP forbids it');
        if (/<style[\s>]/i.test(html) || /\sstyle="/i.test(html))
          throw new Error('built console has inline styles; the CSP forbids them');
        return html;
      },
    },
  };
}

/**
 * `vite build`: the console (renderer/) into dist-renderer/, relative URLs so
 * it works under `{base_url}/console/` and from app:// in Electron.
 * `vite build --mode preload`: the Electron preload as one CommonJS file
 * (sandboxed preloads cannot load ES modules or our other files).
 * `vite` (dev): set GATEHOUSE_URL to a running service to proxy the admin API.
 */
export default defineConfig(({ mode }) => {
  if (mode === 'preload') {
    return {
      publicDir: false,
      build: {
        outDir: here('./dist/main/app'),
        emptyOutDir: false,
        minify: false,
        sourcemap: false,
        target: 'chrome130',
        lib: { entry: here('./main/app/preload.ts'), formats: ['cjs'], fileName: () => 'preload.cjs' },
        rollupOptions: { external: ['electron'] },
      },
    };
  }
  const target = process.env.GATEHOUSE_URL;
  return {
    root: here('./renderer'),
    base: './',
    plugins: [react(), consoleCsp()],
    build: {
      outDir: here('./dist-renderer'),
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: false,
      // The bundle budget is 250 kB gzipped; warn well before it.
      chunkSizeWarningLimit: 600,
      modulePreload: { polyfill: false },
    },
    server: target ? { proxy: { [ADMIN_PREFIX]: { target, changeOrigin: false } } } : {},
  };
});
