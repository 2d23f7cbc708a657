// Builds the MCP Apps views (web/apps/*.html) into web/dist-apps: one self-contained HTML file
// each, its script and styles inlined, so a host can render it from resources/read alone. One
// Vite build per view: an inline module script cannot import a chunk shared with another view.
import { rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { build } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = resolve(here, '..', 'dist-apps');
const VIEWS = ['result-grid', 'result-chart', 'plan-viewer'];

/** Puts each emitted script and stylesheet into the HTML that names it, and drops the files. */
function singleFile() {
  return {
    name: 'pgmcp-single-file',
    enforce: 'post',
    generateBundle(_options, bundle) {
      for (const html of Object.values(bundle)) {
        if (html.type !== 'asset' || !html.fileName.endsWith('.html')) continue;
        let text = String(html.source);
        for (const [name, file] of Object.entries(bundle)) {
          const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          if (file.type === 'chunk') {
            const tag = new RegExp(
              `<script type="module" crossorigin src="[^"]*${escaped}"></script>`,
            );
            if (!tag.test(text)) continue;
            // "</script" inside the code would end the element early, and "<!--" could start
            // the parser's escaped state; both mean the same with a backslash inside JS.
            const code = file.code.replace(/<\/script/gi, '<\\/script').replace(/<!--/g, '<\\!--');
            text = text.replace(tag, () => `<script type="module">${code}</script>`);
            delete bundle[name];
          } else if (name.endsWith('.css')) {
            const tag = new RegExp(`<link rel="stylesheet" crossorigin href="[^"]*${escaped}">`);
            if (!tag.test(text)) continue;
            const css = String(file.source).replace(/<\/style/gi, '<\\/style');
            text = text.replace(tag, () => `<style>${css}</style>`);
            delete bundle[name];
          }
        }
        if (/<script[^>]+src=|<link[^>]+href=/.test(text)) {
          throw new Error(`${html.fileName}: a script or stylesheet was left outside the file.`);
        }
        html.source = text;
      }
    },
  };
}

rmSync(outDir, { recursive: true, force: true });
for (const view of VIEWS) {
  await build({
    configFile: false,
    root: here,
    base: './',
    logLevel: 'warn',
    plugins: [react(), singleFile()],
    build: {
      outDir,
      emptyOutDir: false,
      target: 'es2022',
      modulePreload: false,
      cssCodeSplit: false,
      assetsInlineLimit: Number.MAX_SAFE_INTEGER,
      sourcemap: false,
      rollupOptions: {
        input: resolve(here, `${view}.html`),
        output: { inlineDynamicImports: true },
        onwarn(warning, warn) {
          if (warning.code === 'INVALID_ANNOTATION') return;
          warn(warning);
        },
      },
    },
  });
}
