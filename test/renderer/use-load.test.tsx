// @vitest-environment jsdom
import { act, cleanup, renderHook, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Result } from '../../main/contract/index.ts';
import { useLoad } from '../../renderer/lib/use-load.ts';

afterEach(cleanup);

/** A load whose answers the test hands out one by one, in the order the requests were made. */
function answers<T>() {
  const waiting: Array<(r: Result<T>) => void> = [];
  return {
    load: () => new Promise<Result<T>>((resolve) => waiting.push(resolve)),
    requests: () => waiting.length,
    answer: async (i: number, data: T) => act(async () => waiting[i]!({ ok: true, data })),
  };
}

describe('useLoad', () => {
  it('a change that arrives while a reload is on its way is not overwritten by that older answer', async () => {
    const a = answers<string[]>();
    const { result } = renderHook(() => useLoad(a.load, []));
    await a.answer(0, ['pending']);
    expect(result.current.state).toEqual({ status: 'ready', data: ['pending'] });

    // A reload leaves (a health event), then a live event changes the list before its answer comes back.
    act(() => result.current.reload());
    act(() => result.current.update(() => ['failed']));
    // The answer was read before the change: it is not shown over it, and the list is asked for again.
    await a.answer(1, ['pending']);
    expect(result.current.state).toEqual({ status: 'ready', data: ['failed'] });
    await waitFor(() => expect(a.requests()).toBe(3));
    await a.answer(2, ['failed', 'new']);
    expect(result.current.state).toEqual({ status: 'ready', data: ['failed', 'new'] });
    expect(a.requests()).toBe(3);
  });

  it('a change during the first load is not lost: the first answer shows, then the load is asked again', async () => {
    const a = answers<string[]>();
    const { result } = renderHook(() => useLoad(a.load, []));
    act(() => result.current.update(() => ['never applied: nothing loaded yet']));
    await a.answer(0, ['before']);
    expect(result.current.state).toEqual({ status: 'ready', data: ['before'] });
    await waitFor(() => expect(a.requests()).toBe(2));
    await a.answer(1, ['after']);
    expect(result.current.state).toEqual({ status: 'ready', data: ['after'] });
  });

  it('without a change meanwhile, one request per load and its answer shown', async () => {
    const a = answers<string[]>();
    const { result } = renderHook(() => useLoad(a.load, []));
    await a.answer(0, ['x']);
    act(() => result.current.update((l) => [...l, 'y']));
    expect(result.current.state).toEqual({ status: 'ready', data: ['x', 'y'] });
    act(() => result.current.reload());
    await a.answer(1, ['x', 'y', 'z']);
    expect(result.current.state).toEqual({ status: 'ready', data: ['x', 'y', 'z'] });
    expect(a.requests()).toBe(2);
  });
});
