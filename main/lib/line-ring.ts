/**
 * The last lines of a stream (a child process's stderr), bounded in lines
 * and in characters per line: a chatty or hostile process cannot grow it.
 * A line still being written is kept apart until its newline (or its bound).
 */
export class LineRing {
  private readonly lines: string[] = [];
  private partial = '';

  constructor(
    private readonly maxLines = 200,
    private readonly maxLineChars = 1000,
  ) {}

  write(chunk: string): void {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    if (this.partial.length > this.maxLineChars) {
      parts.push(this.partial);
      this.partial = '';
    }
    for (const line of parts) this.push(line);
  }

  /** The kept lines, oldest first, with the unfinished one last. */
  snapshot(): string[] {
    return this.partial ? [...this.lines, this.partial] : [...this.lines];
  }

  private push(line: string): void {
    this.lines.push(line.length > this.maxLineChars ? `${line.slice(0, this.maxLineChars)}…` : line);
    if (this.lines.length > this.maxLines) this.lines.splice(0, this.lines.length - this.maxLines);
  }
}
