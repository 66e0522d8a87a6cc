/**
 * Keeps the bridge's memory near Node's baseline while large messages pass.
 * Each megabyte forwarded leaves Buffers behind (socket and pipe reads, line
 * assembly) whose memory V8 frees only after a garbage collection, and it
 * waits for ~64 MB of such memory before starting one on its own. The bridge
 * allocates few JS objects, so that wait is long: thirty 512 KB round trips
 * held ~45 MB. A scavenge (young-generation GC, well under a millisecond)
 * once a request with large messages is done returns it. Not earlier: a
 * scavenge while a message is still in flight would keep its Buffers alive
 * longer (they would be promoted), not shorter.
 */

const AFTER_BYTES = 1024 * 1024;
let pending = 0;
type Gc = (opts: { type: 'minor' }) => void;
let gc: Promise<Gc | null> | undefined;

// Loaded on first need: node:v8 and node:vm cost start-up time most bridges never recoup.
function collector(): Promise<Gc | null> {
  gc ??= Promise.all([import('node:v8'), import('node:vm')]).then(
    ([v8, vm]) => {
      // Node offers no API for this; --expose-gc set at run time makes gc() available to a new context.
      v8.setFlagsFromString('--expose-gc');
      return vm.runInNewContext('gc') as Gc;
    },
    () => null,
  );
  return gc;
}

/** Counts the bytes of a large message passing through. */
export function noteLargeMessage(bytes: number): void {
  pending += bytes;
}

/** Called when a request is done: collect if enough large-message garbage has piled up. */
export function collectIfDue(): void {
  if (pending < AFTER_BYTES) return;
  pending = 0;
  // After the current I/O callback, when the last write of the response has returned.
  setImmediate(() => void collector().then((run) => run?.({ type: 'minor' })));
}
