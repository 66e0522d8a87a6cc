import type { Readable, Writable } from 'node:stream';
import { noteMessage } from './memory.ts';

/**
 * The stdio half: newline-delimited JSON-RPC, as MCP's stdio transport
 * defines it. Lines stay Buffers; the pump decides what to look at.
 */

const LF = 0x0a;
const CR = 0x0d;

export class LineReader {
  private partial: Buffer[] = [];

  constructor(
    input: Readable,
    private readonly onLine: (line: Buffer) => void,
    onEnd: () => void,
  ) {
    input.on('data', (chunk: Buffer) => this.push(chunk));
    input.on('end', () => {
      // A last message without its newline is still a message.
      if (this.partial.length) this.emit(Buffer.concat(this.partial));
      this.partial = [];
      onEnd();
    });
    input.on('error', onEnd);
  }

  private push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) break;
      let line = chunk.subarray(start, nl);
      if (this.partial.length) {
        this.partial.push(line);
        line = Buffer.concat(this.partial);
        this.partial = [];
      }
      this.emit(line);
      start = nl + 1;
    }
    if (start < chunk.length) this.partial.push(start === 0 ? chunk : chunk.subarray(start));
  }

  private emit(line: Buffer): void {
    noteMessage(line.length);
    if (line.length && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    if (line.length === 0) return;
    this.onLine(line);
  }
}

const NEWLINE = Buffer.from('\n');

// Below this, one write of a copy is cheaper than a second system call; above, the copy costs more.
const COPY_LIMIT = 64 * 1024;

/** Writes one message per line; a large one in two writes, so it is never copied. */
export class LineWriter {
  private broken = false;

  constructor(
    private readonly out: Writable,
    onBroken: () => void,
  ) {
    out.on('error', () => {
      // EPIPE: the client is gone; nothing more can be delivered.
      if (!this.broken) {
        this.broken = true;
        onBroken();
      }
    });
  }

  write(message: Buffer | string): void {
    if (this.broken) return;
    if (typeof message === 'string') {
      this.out.write(`${message}\n`);
    } else if (message.length < COPY_LIMIT) {
      this.out.write(Buffer.concat([message, NEWLINE], message.length + 1));
    } else {
      this.out.write(message);
      this.out.write(NEWLINE);
    }
  }
}
