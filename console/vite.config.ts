import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The console (issue 17): a single-page app served at /console beside the API (same origin). */
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hashed file names: the embedded server and CloudFront cache them for a year.
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `npx vite console` during development: the API of a running `npm start` on the same origin.
    proxy: { '^/(?!console/)': 'http://127.0.0.1:8080' },
  },
});
