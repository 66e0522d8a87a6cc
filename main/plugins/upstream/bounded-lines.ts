/**
 * Newline-delimited messages from an upstream's stdout, each at most
 * `maxBytes`. A longer one is never held: its bytes are counted and dropped
 * as they arrive, keeping only its first and last few hundred bytes, so the
 * answer it belonged to can be named (which request it answers) and refused
 * while the process, which did nothing wrong but answer too much, stays up.
 */
export type Framed = { kind: 'line'; text: string } | { kind: 'oversized'; bytes: number; head: string; tail: string };

const EDGE = 512;

export class BoundedLines {
  private parts: Buffer[] = [];
  private held = 0;
  /** the line being dropped: its size so far, its first and its last bytes */
  private dropping: { bytes: number; head: Buffer; tail: Buffer } | null = null;

  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** The messages completed by `chunk`, in order. */
  push(chunk: Buffer): Framed[] {
    const out: Framed[] = [];
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(0x0a, from);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(from, end));
      if (nl === -1) break;
      out.push(this.endLine());
      from = nl + 1;
    }
    return out;
  }

  private take(piece: Buffer): void {
    if (!piece.length) return;
    if (!this.dropping && this.held + piece.length <= this.maxBytes) {
      this.parts.push(piece);
      this.held += piece.length;
      return;
    }
    if (!this.dropping) {
      const start = Buffer.concat(this.parts);
      this.parts = [];
      this.held = 0;
      this.dropping = { bytes: start.length, head: Buffer.from(start.subarray(0, EDGE)), tail: Buffer.alloc(0) };
      if (this.dropping.head.length < EDGE) {
        const more = piece.subarray(0, EDGE - this.dropping.head.length);
        this.dropping.head = Buffer.concat([this.dropping.head, more]);
      }
      this.dropping.tail = Buffer.from(start.subarray(Math.max(0, start.length - EDGE)));
    }
    const d = this.dropping;
    d.bytes += piece.length;
    d.tail = Buffer.from(Buffer.concat([d.tail, piece.subarray(Math.max(0, piece.length - EDGE))]).subarray(-EDGE));
  }

  private endLine(): Framed {
    if (this.dropping) {
      const { bytes, head, tail } = this.dropping;
      this.dropping = null;
      return { kind: 'oversized', bytes, head: head.toString('utf8'), tail: tail.toString('utf8') };
    }
    const text = Buffer.concat(this.parts).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.held = 0;
    return { kind: 'line', text };
  }
}

/**
 * The JSON-RPC id of an answer seen only by its edges: `{"jsonrpc":"2.0","id":7,...` at the start (most SDKs)
 * or `...,"id":7}` at the very end (the TypeScript SDK puts `result` first). A nested object's `"id"` ends in
 * more than one brace, and a quoted one inside a string is escaped, so neither is taken for it.
 */
export function idAtEdges(head: string, tail: string): string | number | null {
  const value = String.raw`(-?\d{1,16}|"(?:[^"\\]|\\.){0,200}")`;
  const start = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}\s*[,}]`).exec(
    head,
  );
  const end = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  const raw = start?.[1] ?? end?.[1];
  if (raw === undefined) return null;
  try {
    return JSON.parse(raw) as string | number;
  } catch {
    return null;
  }
}
