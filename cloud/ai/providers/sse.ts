/**
 * An incremental decoder of server-sent events (the WHATWG event-stream
 * format both provider wire formats use): bytes in, `{event, data}` out, with
 * a bound on how much one unfinished event may hold so a provider that never
 * sends a blank line cannot make us buffer without end.
 */

export interface SseEvent {
  /** the `event:` field, `message` when absent */
  event: string;
  data: string;
}

export class SseTooLarge extends Error {
  constructor(limit: number) {
    super(`one streamed event is larger than ${limit} characters`);
    this.name = 'SseTooLarge';
  }
}

export class SseDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private partial = '';
  private eventName = '';
  private data: string[] = [];
  private dataChars = 0;
  private sawData = false;
  /** a CR ended the last chunk: a LF at the start of the next one belongs to it */
  private pendingCr = false;

  constructor(private readonly maxEventChars = 1_000_000) {}

  push(chunk: Uint8Array): SseEvent[] {
    return this.lines(this.decoder.decode(chunk, { stream: true }));
  }

  /** Call at the end of the stream: a last event without its blank line is not dispatched (as the spec says). */
  end(): SseEvent[] {
    return this.lines(this.decoder.decode());
  }

  private lines(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let s = text;
    if (this.pendingCr && s.startsWith('\n')) s = s.slice(1);
    this.pendingCr = false;
    let buf = this.partial + s;
    let start = 0;
    for (let i = 0; i < buf.length; i++) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(buf.slice(start, i), out);
      if (c === 13) {
        if (i + 1 === buf.length) this.pendingCr = true;
        else if (buf.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    buf = buf.slice(start);
    if (buf.length + this.dataChars > this.maxEventChars) throw new SseTooLarge(this.maxEventChars);
    this.partial = buf;
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.sawData) out.push({ event: this.eventName || 'message', data: this.data.join('\n') });
      this.eventName = '';
      this.data = [];
      this.dataChars = 0;
      this.sawData = false;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventName = value;
    else if (field === 'data') {
      this.dataChars += value.length + 1;
      if (this.dataChars > this.maxEventChars) throw new SseTooLarge(this.maxEventChars);
      this.data.push(value);
      this.sawData = true;
    }
    // `id` and `retry` mean nothing for a one-shot provider call.
  }
}
