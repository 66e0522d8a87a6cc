import { useEffect, useMemo, useState } from 'react';
import { useApi } from './console-context.tsx';

/**
 * User ids as people know them (their login), for tables and approvals.
 * Best effort: until the list arrives, or if it cannot be read, the id is shown.
 */
export function useUserNames(): ((id: string | null | undefined) => string) & {
  all: readonly (readonly [string, string])[];
} {
  const api = useApi();
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  useEffect(() => {
    let alive = true;
    void api['users.list']({}).then((r) => {
      if (alive && r.ok) setNames(new Map(r.data.map((u) => [u.id, u.login])));
    });
    return () => {
      alive = false;
    };
  }, [api]);
  // one function per list of names, so tables memoized on it re-render only when the names arrive
  return useMemo(() => {
    const name = (id: string | null | undefined) => (id ? (names.get(id) ?? id) : '');
    return Object.assign(name, { all: [...names] });
  }, [names]);
}
