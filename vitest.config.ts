import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/helpers/slow-first-sequencer.ts';

// One config for every suite. Renderer tests opt into jsdom per file with
// `// @vitest-environment jsdom`; everything else runs as plain Node against
// real sockets, real files and a real Secret Service.
// The tests start thousands of Node processes (the service, the CLI, npm's MCP servers, real AI clients): with V8's
// compile cache (Node 22) each compiles its JavaScript once per run instead of at every start. Test-only and per user;
// a person's own setting wins.
process.env.NODE_COMPILE_CACHE ||= join(tmpdir(), `gatehouse-test-compile-cache-${userInfo().uid}`);

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    exclude: ['node_modules/**', 'dist/**'],
    // Names the file whose worker died, if one does (see the file).
    setupFiles: ['test/helpers/worker-trace.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three on two cores: a worker spends more than half its time waiting on the processes its tests start (CPU
    // profiles of a whole run, 2026-12-02), so with two the cores were 80% busy and the run took 345 s; with three,
    // 301 s. More would only queue the same CPU.
    maxWorkers: 3,
    // A worker runs file after file in one process, its modules loaded once: a fresh process per file
    // spent more time importing (the MCP SDK, zod schemas, the service) than many files spend testing
    // (test/core, test/lib, test/contract: 19.9 s -> 10.3 s; test/mcp: 46 s -> 29 s). So a test file
    // must leave no global state behind: restore process.env, timers and mocks it changes (afterEach/afterAll).
    isolate: false,
    // Slowest files first, Node files before jsdom ones (see the file).
    sequence: { sequencer: SlowFirstSequencer },
  },
});
