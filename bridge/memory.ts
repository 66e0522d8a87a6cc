/**
 * Keeps the bridge's memory near Node's own baseline (~40 MB here; a bare
 * node:http client doing keep-alive requests peaks around 52 MB). The V8 flags
 * are set at run time, once the first request is answered: on the command
 * line any V8 flag cost ~20 ms of every cold start here (apparently V8 then
 * refuses Node's built-in code cache), and loading node:v8 stays off that path.
 *
 * 1. No optimizing compiler. The bridge's JavaScript is thin (the time goes to
 *    system calls, the HTTP parser and JSON.parse, all native), so TurboFan
 *    buys nothing measurable here, while its compilations left ~6-8 MB of
 *    resident memory behind.
 * 2. A young generation that does not grow. With in-flight requests alive at
 *    every scavenge, V8 keeps doubling it towards 16 MB per semi-space: over
 *    9000 calls the peak went from ~50 MB to ~78 MB with a live heap of 5 MB.
 *    With the growth factor at 1 it levels off around 56 MB, at no
 *    measurable CPU cost.
 * 3. A scavenge once a request that moved large messages is done. Each
 *    megabyte forwarded leaves Buffers (socket and pipe reads, line assembly)
 *    whose memory V8 frees only after a garbage collection, and it waits for
 *    ~64 MB of such memory before starting one on its own: thirty 512 KB round
 *    trips held ~45 MB. A young-generation GC (well under a millisecond) right
 *    after the request returns it. Not earlier: a scavenge while a message is
 *    still in flight would keep its Buffers alive longer (they would be
 *    promoted), not shorter.
 */

const AFTER_BYTES = 1024 * 1024;
// Below this, a message leaves too little behind to count.
const LARGE = 256 * 1024;
let pending = 0;

type Gc = (opts: { type: 'minor' }) => void;
let runtime: Promise<Gc | null> | undefined;

// node:v8 and node:vm are loaded off the start-up path, on the first call.
function lean(): Promise<Gc | null> {
  runtime ??= Promise.all([import('node:v8'), import('node:vm')]).then(
    ([v8, vm]) => {
      v8.setFlagsFromString('--no-opt');
      v8.setFlagsFromString('--semi-space-growth-factor=1');
      // Node offers no API for this; --expose-gc set at run time makes gc() available to a new context.
      v8.setFlagsFromString('--expose-gc');
      return vm.runInNewContext('gc') as Gc;
    },
    () => null,
  );
  return runtime;
}

/** Counts a message passing through, twice: the Buffers it was read in and the one it was assembled into. */
export function noteMessage(bytes: number): void {
  if (bytes >= LARGE) pending += bytes * 2;
}

/** Called when a request is done. */
export function requestDone(): void {
  if (!runtime) setImmediate(() => void lean());
  if (pending < AFTER_BYTES) return;
  pending = 0;
  // After the current I/O callback, when the last write of the response has returned.
  setImmediate(() => void lean().then((gc) => gc?.({ type: 'minor' })));
}
