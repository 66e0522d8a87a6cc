import { noteMessage } from './memory.ts';
import { MAX_MESSAGE_BYTES, MessageTooLarge } from './message-limit.ts';

/**
 * A Server-Sent Events parser over raw bytes. The data of an event stays a
 * Buffer (a view into the received bytes where possible), so a multi-megabyte
 * result is copied once, never decoded into a string, and never parsed here.
 */

export interface SseEvent {
  event: string | undefined;
  id: string | undefined;
  data: Buffer;
  /** More than one `data:` line: the JSON may contain line breaks and must be re-serialized before stdio. */
  multiLine: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const EMPTY = Buffer.alloc(0);
/** What one kept data line costs beyond its bytes (its Buffer view and list slot), counted against the bound. */
const LINE_OVERHEAD = 128;

export class SseParser {
  private partial: Buffer[] = [];
  private data: Buffer[] = [];
  /** Bytes held in `partial` and in `data`: together, the event being assembled. */
  private partialBytes = 0;
  private dataBytes = 0;
  private event: string | undefined;
  private id: string | undefined;
  /** The id of the last event seen, for Last-Event-ID on a reconnect. */
  lastEventId: string | undefined;
  /** `retry:` from the server, in milliseconds. */
  retryMs: number | undefined;

  constructor(
    private readonly onEvent: (e: SseEvent) => void,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {}

  /** Throws `MessageTooLarge` once the event being assembled passes the bound (so at most one chunk more is held); the parser is unusable after that. */
  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) break;
      let line: Buffer;
      if (this.partial.length) {
        this.partial.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.partial);
        this.partial = [];
        this.partialBytes = 0;
      } else {
        line = chunk.subarray(start, nl);
      }
      if (line.length && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
      this.line(line);
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.partial.push(start === 0 ? chunk : chunk.subarray(start));
      this.partialBytes += chunk.length - start;
    }
    if (this.partialBytes + this.dataBytes > this.maxBytes) throw new MessageTooLarge(this.maxBytes, this.lastEventId);
  }

  private line(line: Buffer): void {
    if (line.length === 0) return this.dispatch();
    if (line[0] === COLON) return; // comment / keep-alive
    let colon = line.indexOf(COLON);
    if (colon === -1) colon = line.length;
    const field = line.toString('latin1', 0, colon);
    let valueStart = colon + 1;
    if (line[valueStart] === SPACE) valueStart++;
    const value = valueStart <= line.length ? line.subarray(valueStart) : EMPTY;
    switch (field) {
      case 'data':
        this.data.push(value);
        // What the line costs, not only its value: an empty `data:` line adds no bytes but one Buffer
        // (~100 bytes of heap) and a joining newline, and endless such lines must reach the bound too.
        this.dataBytes += line.length + 1 + LINE_OVERHEAD;
        break;
      case 'event':
        this.event = value.toString('utf8');
        break;
      case 'id':
        if (!value.includes(0)) this.id = value.toString('utf8');
        break;
      case 'retry': {
        const n = Number(value.toString('latin1'));
        if (Number.isInteger(n) && n >= 0) this.retryMs = n;
        break;
      }
    }
  }

  private dispatch(): void {
    if (this.id !== undefined) this.lastEventId = this.id;
    const parts = this.data;
    const event = this.event;
    const id = this.id;
    this.data = [];
    this.dataBytes = 0;
    this.event = undefined;
    this.id = undefined;
    // No data, or only empty data lines: nothing to dispatch (the spec's rule; servers send such
    // "priming" events to hand out an event id for resumption).
    if (parts.length === 0 || (parts.length === 1 && parts[0]!.length === 0)) return;
    const multiLine = parts.length > 1;
    const data = multiLine ? Buffer.concat(parts.flatMap((p, i) => (i ? [Buffer.from('\n'), p] : [p]))) : parts[0]!;
    noteMessage(data.length);
    this.onEvent({ event, id, data, multiLine });
  }
}
