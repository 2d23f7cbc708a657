// The web client is a static bundle the pgmcp HTTP server serves at /. Everything is bundled
// (no CDN at runtime) and file names carry a content hash, so /assets/* may be cached forever.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // A strict CSP forbids inline scripts; tiny assets must stay files, not data: URLs in JS.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    rollupOptions: {
      // zod (through the AI SDK) carries comments rollup cannot place; they only cost noise.
      onwarn(warning, warn) {
        if (warning.code === 'INVALID_ANNOTATION') return;
        warn(warning);
      },
    },
  },
  server: {
    // `npm run dev -w web` next to a pgmcp on :8080.
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
