import { readFile } from 'node:fs/promises';

/** A process's resident set now (MB), from /proc; null once it has gone. */
export async function rssMb(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : null;
}

const SAMPLE_MS = 500;
// V8's memory reducer starts its collections some 8-20 s after the heap stopped growing (seen here: between 8 and 20 s).
const CAP_MS = 45_000;
const HELD_MS = 4_000;

/**
 * The resident set of an idle process once V8 has given back what its start left behind. Right after a busy start
 * a Node process keeps its grown young generation and the old generation's peak (at 5,000 upstream tools, 190 MB
 * where the idle service needs 125); V8's memory reducer returns them once the process has been idle a while. This
 * waits for that: the reading has fallen by at least `minDrop` from the first one and then held within 1 MB for
 * 4 s, or 45 s have passed (then the last reading). `fell` says which.
 */
export async function settledRssMb(
  pid: number,
  minDrop = 0.05,
): Promise<{ mb: number; afterMs: number; fell: boolean } | null> {
  const first = await rssMb(pid);
  if (first === null) return null;
  const t = performance.now();
  let last = first;
  let heldSince = t;
  for (;;) {
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
    const now = await rssMb(pid);
    if (now === null) return null;
    const at = performance.now();
    if (Math.abs(now - last) > 1) heldSince = at;
    last = now;
    const fell = now <= first * (1 - minDrop);
    if ((fell && at - heldSince >= HELD_MS) || at - t >= CAP_MS) return { mb: now, afterMs: at - t, fell };
  }
}
