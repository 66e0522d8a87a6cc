import { describe, expect, it } from 'vitest';
import { RPC_ACTIONS } from '../../main/contract/index.ts';
import type { Api, ApiEvent } from '../../main/contract/index.ts';
import { createElectronApi } from '../../renderer/api/electron-client.ts';
import { pickConsoleEnv } from '../../renderer/api/index.ts';
import { FakeApi, makeStaged } from './fake-api.ts';

describe('Electron client', () => {
  it('has every action and passes calls and answers through the preload', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1)] });
    const api = createElectronApi(fake.api);
    for (const action of RPC_ACTIONS)
      expect(typeof (api as unknown as Record<string, unknown>)[action]).toBe('function');
    const r = await api['staged.confirm']({ id: 'stg_0001' });
    expect(r.ok && r.data.status).toBe('confirmed');
    expect(fake.callsTo('staged.confirm')).toEqual([{ id: 'stg_0001' }]);
    expect(await api['staged.confirm']({ id: 'stg_0001' })).toMatchObject({
      ok: false,
      code: 'staged_already_decided',
    });
  });

  it('turns a rejected IPC call into service_unavailable and a malformed answer into internal_error', async () => {
    const bridge = {
      'health.get': () => Promise.reject(new Error("No handler registered for 'gatehouse:health.get'")),
      'stats.get': () => Promise.resolve('nonsense'),
      subscribe: () => () => {},
    } as unknown as Api;
    const api = createElectronApi(bridge);
    expect(await api['health.get']({})).toMatchObject({ ok: false, code: 'service_unavailable' });
    expect(await api['stats.get']({})).toMatchObject({ ok: false, code: 'internal_error' });
  });

  it('checks events against the contract and shares one IPC subscription', () => {
    let forward: ((e: unknown) => void) | null = null;
    let subscriptions = 0;
    let unsubscribed = 0;
    const bridge = {
      subscribe: (l: (e: unknown) => void) => {
        subscriptions++;
        forward = l;
        return () => unsubscribed++;
      },
    } as unknown as Api;
    const api = createElectronApi(bridge);
    const got: ApiEvent[] = [];
    const off1 = api.subscribe((e) => got.push(e));
    const off2 = api.subscribe(() => {});
    expect(subscriptions).toBe(1);
    forward!({ type: 'health' });
    forward!({ type: 'staged', item: { id: 'missing fields' } });
    expect(got).toEqual([{ type: 'health' }]);
    off1();
    off2();
    expect(unsubscribed).toBe(1);
  });

  it('is picked when the preload exposed window.gatehouse, else the REST client with download links', () => {
    const fake = new FakeApi();
    const electronWin = {
      gatehouse: fake.api,
      location: { origin: 'app://console', pathname: '/index.html' },
    } as unknown as Window;
    expect(pickConsoleEnv(electronWin).mode).toBe('electron');
    expect(pickConsoleEnv(electronWin).exportHref('csv', {})).toBeNull();
    const browserWin = { location: { origin: 'http://127.0.0.1:7823', pathname: '/console/' } } as unknown as Window;
    const env = pickConsoleEnv(browserWin);
    expect(env.mode).toBe('browser');
    expect(env.exportHref('jsonl', { tool: 'pages_get', limit: 50, cursor: 'c' })).toBe(
      'http://127.0.0.1:7823/wp-json/gatehouse/v1/admin/audit/export?format=jsonl&tool=pages_get',
    );
  });
});
