/**
 * Ids from Web Crypto (available in Node 20 and Electron): UUIDv7 for
 * time-ordered records (audit entries, usage events, request ids), short
 * random ids for records people type (tokens, staged writes).
 */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Random bytes for ids, drawn from Web Crypto a few KiB at a time instead of once per id (ids are made on every call). */
let pool = new Uint8Array(0);
let poolAt = 0;
function take(n: number): number {
  if (poolAt + n > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(4096));
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return at;
}

/** RFC 9562 UUIDv7: 48 bits of milliseconds, version 7, 74 random bits. */
export function uuidv7(now: number = Date.now()): string {
  const t = Math.max(0, Math.floor(now)).toString(16).padStart(12, '0').slice(-12);
  const o = take(10);
  const r = pool;
  return `${t.slice(0, 8)}-${t.slice(8)}-7${HEX[r[o]! & 0x0f]![1]}${HEX[r[o + 1]!]}-${HEX[(r[o + 2]! & 0x3f) | 0x80]}${HEX[r[o + 3]!]}-${HEX[r[o + 4]!]}${HEX[r[o + 5]!]}${HEX[r[o + 6]!]}${HEX[r[o + 7]!]}${HEX[r[o + 8]!]}${HEX[r[o + 9]!]}`;
}

const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
/** e.g. `tok_k3m9x2pq`: short, unambiguous, typeable in a CLI. */
export function shortId(prefix: string, length = 10): string {
  const b = new Uint8Array(length);
  globalThis.crypto.getRandomValues(b);
  return `${prefix}_${Array.from(b, (x) => ALPHABET[x % ALPHABET.length]).join('')}`;
}

export function randomBase64Url(byteLength: number): string {
  const b = new Uint8Array(byteLength);
  globalThis.crypto.getRandomValues(b);
  return Buffer.from(b).toString('base64url');
}
