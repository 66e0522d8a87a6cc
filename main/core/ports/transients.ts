import type { DocumentStore } from './ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { OptionsData } from './options-data.ts';

/** Records with an expiry in the options store: ignored once expired, swept on a timer. */
export class Transients {
  constructor(
    private readonly store: DocumentStore<OptionsData>,
    private readonly clock: Clock,
  ) {}

  get<T>(key: string): T | undefined {
    const t = this.store.read().transients[key];
    return t && t.expires_at > this.clock.now() ? (t.value as T) : undefined;
  }

  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    const expires_at = this.clock.now() + ttlMs;
    await this.store.update((d) => {
      d.transients[key] = { value, expires_at };
    });
  }

  async delete(key: string): Promise<void> {
    await this.store.update((d) => {
      delete d.transients[key];
    });
  }

  /** Live entries whose key starts with `prefix`. */
  list<T>(prefix: string): Array<{ key: string; value: T; expires_at: number }> {
    const now = this.clock.now();
    return Object.entries(this.store.read().transients)
      .filter(([k, t]) => k.startsWith(prefix) && t.expires_at > now)
      .map(([key, t]) => ({ key, value: t.value as T, expires_at: t.expires_at }));
  }

  /**
   * Removes expired entries and hands each to `onExpire` first (the staging
   * layer records an `expired` transition). Returns how many were swept.
   */
  async sweep(onExpire?: (key: string, value: unknown) => void): Promise<number> {
    const now = this.clock.now();
    const expired = Object.entries(this.store.read().transients).filter(([, t]) => t.expires_at <= now);
    if (expired.length === 0) return 0;
    return this.store.update((d) => {
      let n = 0;
      for (const [key, t] of Object.entries(d.transients)) {
        if (t.expires_at > now) continue;
        onExpire?.(key, t.value);
        delete d.transients[key];
        n++;
      }
      return n;
    });
  }
}
