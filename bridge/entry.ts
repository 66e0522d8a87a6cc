import { exitWhenFlushed, main } from './cli.ts';

// The process entry (bundled to dist/bridge/gatehouse-bridge.mjs). Anything
// thrown this far is a bug: one line on stderr and exit 1, never a stack on stdout.
main(process.argv.slice(2)).then(exitWhenFlushed, (e: unknown) => {
  process.stderr.write(`gatehouse-bridge error: ${e instanceof Error ? e.message : String(e)}\n`);
  exitWhenFlushed(1);
});
