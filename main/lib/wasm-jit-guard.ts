import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's inlining of JavaScript-to-WebAssembly calls into optimized
 * JavaScript (`--no-turbo-inline-js-wasm-calls`), once per process, before
 * the first WebAssembly module we load (the Cedar policy engine, PGlite).
 *
 * Why: on Node 20's V8 (11.3), a lazy deoptimization of a function that had a
 * Cedar call inlined aborts the whole process ("Fatal error: unreachable code"
 * in Deoptimizer::DoComputeBuiltinContinuation, exit by SIGTRAP). The policy
 * benchmark hit it in 3 of 8 runs; with this flag, 0 of 16 (docs/decisions.md,
 * "The JIT guard before WebAssembly, and the narrowed policy requests with it"). A call into WebAssembly then goes
 * through V8's ordinary wrapper: a few tens of nanoseconds, against a service
 * that would otherwise die. The flag only affects code compiled after it is
 * set, which is why it runs before the module is loaded.
 */
let applied = false;

export function avoidJsToWasmInlining(): void {
  if (applied) return;
  applied = true;
  setFlagsFromString('--no-turbo-inline-js-wasm-calls');
}
