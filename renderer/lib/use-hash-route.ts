import { useSyncExternalStore } from 'react';

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
