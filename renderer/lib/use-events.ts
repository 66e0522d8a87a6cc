import { useEffect, useRef } from 'react';
import type { ApiEvent } from '../../main/contract/index.ts';
import { useApi } from './console-context.tsx';

/** Listen to live updates while mounted; the latest listener is always the one called. */
export function useApiEvents(listener: (event: ApiEvent) => void): void {
  const api = useApi();
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(() => api.subscribe((event) => ref.current(event)), [api]);
}
