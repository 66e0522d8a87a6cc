import type { ApiEvent } from '../../main/contract/index.ts';

type Listener = (event: ApiEvent) => void;

/**
 * Fan one event source out to many listeners: opened with the first
 * subscriber, closed with the last. A listener that throws does not stop
 * the others.
 */
export function createEventHub(start: () => (emit: Listener) => () => void) {
  const listeners = new Set<Listener>();
  let stop: (() => void) | null = null;
  const emit: Listener = (event) => {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        console.error('gatehouse: event listener failed', error);
      }
    }
  };
  return {
    subscribe(listener: Listener): () => void {
      listeners.add(listener);
      if (!stop) stop = start()(emit);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && stop) {
          const s = stop;
          stop = null;
          s();
        }
      };
    },
  };
}
