import { useEffect, useSyncExternalStore } from 'react';

const subscribe = (onChange: () => void) => {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
};
const read = () => window.location.hash.replace(/^#\/?/, '');

/** The screen named by the address's #fragment; no router library needed for six tabs. */
export function useHashRoute<K extends string>(keys: readonly K[], fallback: K): K {
  const hash = useSyncExternalStore(subscribe, read, () => '');
  const key = hash.split(/[?/]/)[0] ?? '';
  return (keys as readonly string[]).includes(key) ? (key as K) : fallback;
}

/** The approval link an address names (`#approve/<link>`), or null: that page stands alone, without the console's screens. */
export function useApprovalLinkRoute(): string | null {
  const hash = useSyncExternalStore(subscribe, read, () => '');
  const m = /^approve\/([A-Za-z0-9_-]{1,100})$/.exec(hash);
  return m ? m[1]! : null;
}

/** The item an address names after its screen (`#approvals/stg_…`, `#upstreams/linear`), or null. */
export const hashFocus = (): string | null => read().split('/')[1] || null;

/** Calls `choose` with the item the address names each time it changes (a notification's or the tray's click). */
export function useHashFocus(choose: (id: string) => void): void {
  useEffect(() => {
    const onHash = () => {
      const id = hashFocus();
      if (id) choose(id);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [choose]);
}
