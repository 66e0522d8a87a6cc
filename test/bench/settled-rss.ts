import { readFileSync } from 'node:fs';

/** A process's resident set now (MB), from /proc; NaN once it has gone. Synchronous: a sampler calls it every 100 ms. */
export function rssMb(pid: number): number {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // gone
  }
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : NaN;
}

const SAMPLE_MS = 500;
// V8's memory reducer starts its collections some 10-20 s after the heap stopped growing (within 45 s at all but one
// of some twenty starts here: the callers count the starts where it did).
const CAP_MS = 45_000;
const HELD_MS = 4_000;

/**
 * The resident set of an idle process once V8 has given back what its start left behind. Right after a busy start
 * a Node process keeps its grown young generation and the old generation's peak (at 5,000 upstream tools, 178-190 MB
 * where the idle service needs 122-124); V8's memory reducer returns them once the process has been idle a while.
 * This waits for that: the reading has fallen by at least `minDrop` from the first one and then stayed within 1 MB
 * of one value for 4 s (`fell`: true), or 45 s have passed (then the last reading, `fell`: false). A process that
 * was idle already never falls: it costs the whole 45 s and reports `fell`: false.
 */
export async function settledRssMb(
  pid: number,
  minDrop = 0.05,
): Promise<{ mb: number; afterMs: number; fell: boolean } | null> {
  const first = rssMb(pid);
  if (Number.isNaN(first)) return null;
  const t = performance.now();
  // the reading the hold is measured against, and since when it has held; both restart at every move and at the fall
  let anchor = first;
  let heldSince = t;
  let fallen = false;
  for (;;) {
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
    const now = rssMb(pid);
    if (Number.isNaN(now)) return null;
    const at = performance.now();
    const fallsNow = !fallen && now <= first * (1 - minDrop);
    if (Math.abs(now - anchor) > 1 || fallsNow) {
      anchor = now;
      heldSince = at;
    }
    if (fallsNow) fallen = true;
    if (fallen && at - heldSince >= HELD_MS) return { mb: now, afterMs: at - t, fell: true };
    if (at - t >= CAP_MS) return { mb: now, afterMs: at - t, fell: false };
  }
}
