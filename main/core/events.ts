import type { ApiEvent } from '../contract/api.ts';

/** In-process fan-out of live updates (console SSE, Electron IPC, tray). */
export class EventHub {
  private readonly listeners = new Set<(e: ApiEvent) => void>();

  subscribe(listener: (e: ApiEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: ApiEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // a broken listener must not break the call that emitted
      }
    }
  }
}
