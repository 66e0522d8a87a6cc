import { defineConfig } from 'vitest/config';

// One config for every suite. Renderer tests opt into jsdom per file with
// `// @vitest-environment jsdom`; everything else runs as plain Node against
// real sockets, real files and a real Secret Service.
export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    exclude: ['node_modules/**', 'dist/**'],
    // Names the file whose worker died, if one does (see the file).
    setupFiles: ['test/helpers/worker-trace.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: keep child-process-heavy suites from starving each other.
    maxWorkers: 2,
  },
});
