/**
 * A time limit on silence: fires `ms` after it starts, unless touched (which
 * starts the wait again). While paused (any number of overlapping pauses) it
 * does not run; the last resume starts a full wait. Used for an upstream call
 * whose timeout progress extends and a person's answer to a form suspends.
 */
export class IdleTimer {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private paused = 0;
  private done = false;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.arm();
  }

  /** Something happened (progress): the wait starts again. */
  touch(): void {
    if (this.paused === 0) this.arm();
  }

  /** Stops the clock until the returned resume is called (once; later calls do nothing). */
  pause(): () => void {
    this.paused++;
    this.clear();
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      this.paused--;
      if (this.paused === 0) this.arm();
    };
  }

  stop(): void {
    this.done = true;
    this.clear();
  }

  private arm(): void {
    this.clear();
    if (this.done) return;
    this.timer = setTimeout(() => {
      this.done = true;
      this.onIdle();
    }, this.ms);
    this.timer.unref?.();
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
