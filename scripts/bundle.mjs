// `npm run build`'s second step: dist/bundle/, the program bin/pgmcp runs. tsc's dist/ is ~250
// ES modules and zod ~80 CommonJS files; loading them file by file is a large part of a cold
// start, and MCP clients spawn a stdio server per session and wait for its first answer
// (bench/cold-start.mjs). The bundle is the same code in a few files: one for what every command
// loads (with the parts of zod the configuration uses), and one per part a command imports
// when it runs (the databases, HTTP, chat, ...), so those still load only when needed.
// Packages other than zod stay outside (node_modules), as do Node's own modules.
// The output sits two directories below the package root, like dist/cli/: src/core/package-path.ts
// relies on that depth.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

await build({
  configFile: false,
  root,
  logLevel: 'warn',
  // Bundled: zod. Everything else in node_modules is imported at run time as before.
  ssr: { noExternal: ['zod'], target: 'node' },
  build: {
    ssr: true,
    target: 'node20',
    outDir: 'dist/bundle',
    emptyOutDir: true,
    minify: false,
    copyPublicDir: false,
    reportCompressedSize: false,
    rollupOptions: {
      // zod's sources carry /* @__PURE__ */ notes in places Rollup cannot use; it drops them.
      onwarn(warning, warn) {
        if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('node_modules')) return;
        warn(warning);
      },
      input: { main: path.join(root, 'dist/cli/main.js') },
      output: {
        format: 'es',
        entryFileNames: '[name].js',
        chunkFileNames: '[name]-[hash].js',
        manualChunks: (id) => (id.includes('/node_modules/zod/') ? 'zod' : undefined),
      },
    },
  },
});
