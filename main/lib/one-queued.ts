/**
 * Runs `run` at most once at a time, with at most one more run queued: a
 * burst of requests while one runs costs one more run, not one each. For
 * work that only needs to reflect the latest state (a re-listing after an
 * upstream's list_changed): a storm of them can neither pile up nor starve
 * the rest of the process.
 */
export class OneQueued {
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  constructor(private readonly run: () => Promise<void>) {}

  /** Resolves once a run that started after this call has ended (its error is the run's to handle). */
  kick(): Promise<void> {
    if (!this.running) return (this.running = this.start());
    this.next ??= this.running.then(() => {
      this.next = null;
      return (this.running = this.start());
    });
    return this.next;
  }

  /** Resolves once nothing runs or waits. */
  async settled(): Promise<void> {
    while (this.running) await (this.next ?? this.running);
  }

  private start(): Promise<void> {
    const p = this.run()
      .catch(() => undefined)
      .finally(() => {
        if (this.running === p && !this.next) this.running = null;
      });
    return p;
  }
}
