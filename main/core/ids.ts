/**
 * Ids from Web Crypto (available in Node 20 and Electron): UUIDv7 for
 * time-ordered records (audit entries, usage events, request ids), short
 * random ids for records people type (tokens, staged writes).
 */
const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

export function uuidv7(now: number = Date.now()): string {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  let ms = now;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms & 0xff;
    ms = Math.floor(ms / 256);
  }
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
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
