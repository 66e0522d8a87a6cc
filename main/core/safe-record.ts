/**
 * Plain objects keyed by strings a client may have chosen: `rec[key] ??= {}`
 * with key `__proto__` reaches Object.prototype instead of a new entry, and a
 * write through it changes every object in the process. These helpers only
 * ever touch the object's own properties.
 */

/** The own value under `key`, created with `make` when absent. */
export function ownEntry<T>(rec: Record<string, T>, key: string, make: () => T): T {
  if (Object.hasOwn(rec, key)) return rec[key]!;
  const value = make();
  Object.defineProperty(rec, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
}

/** The own value under `key`, or undefined: never an inherited member such as `constructor`. */
export const ownValue = <T>(rec: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(rec, key) ? rec[key] : undefined;

/** Names that are members of every object; refused where a name becomes a key. */
// A Set, not `name in Object.prototype`: a miss of `in` on a fresh string is slow, and a listing asks it per tool.
const OBJECT_MEMBERS = new Set<string>([...Object.getOwnPropertyNames(Object.prototype), '__proto__']);
export const isObjectMemberName = (name: string): boolean => OBJECT_MEMBERS.has(name);
