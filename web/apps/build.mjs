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
            // "</script" inside the code would end the element early. It can only be inside a
            // string, template, regular expression or comment, and "<\/" means "</" in each of
            // them (in a regex "\/" is a valid escape even with the u or v flag).
            const code = file.code.replace(/<\/script/gi, '<\\/script');
            // "<!--" followed by "<script" would put the HTML parser in its double-escaped
            // state, where the element's own "</script>" no longer ends it. No backslash rewrite
            // keeps the meaning everywhere ("\!" is a syntax error in a u-flag regex), so a
            // build whose code holds both stops here instead of shipping a broken view.
            if (/<!--/.test(code) && /<script/i.test(code)) {
              throw new Error(
                `${html.fileName}: the code of ${name} holds both "<!--" and "<script"; inlined, the browser would not find the end of the script.`,
              );
            }
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
