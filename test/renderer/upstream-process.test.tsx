// @vitest-environment jsdom
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../main/contract/index.ts';
import { apiFrom } from '../../renderer/api/api-from.ts';
import { addInput, EMPTY_FORM } from '../../renderer/screens/upstreams/add-input.ts';
import { Upstreams } from '../../renderer/screens/upstreams/upstreams.tsx';
import { startTestService } from '../helpers/service.ts';
import { REPO } from '../plugins/upstream/upstream-world.ts';
import { renderWith } from './render.tsx';

/**
 * The console's process setting of a stdio upstream (docs/upstreams.md, "One process per client"), against
 * the real service: the real server-memory, which keeps a graph per agent, is suggested one process per
 * client; the person switches it, through `upstreams.process`; the add form sends it.
 */
const MEMORY = `${REPO}node_modules/@modelcontextprotocol/server-memory/dist/index.js`;
let svc: Awaited<ReturnType<typeof startTestService>>;

beforeAll(async () => {
  svc = await startTestService();
  const r = await svc.dispatch('upstreams.add', {
    id: 'mem',
    transport: { kind: 'stdio', command: process.execPath, args: [MEMORY], sandbox: { unconfined: true } },
  });
  if (!r.ok) throw new Error(r.message);
}, 60_000);
afterAll(async () => svc?.cleanup());
afterEach(cleanup);

const realApi = () => ({
  api: apiFrom(
    (action, input) => svc.dispatch(action as never, input as never) as never,
    (listener) => svc.events.subscribe((e) => listener(structuredClone(e))),
  ),
});
const stored = async () => {
  const r = await svc.dispatch('upstreams.get', { id: 'mem' });
  if (!r.ok) throw new Error(r.message);
  return (r.data as UpstreamDetail).process!;
};

describe('one process per client, in the console', () => {
  it('suggests it for a known stateful server, and a person switches it on and off', async () => {
    renderWith(realApi(), <Upstreams />);
    const row = (await screen.findByText('mem')).closest('tr')!;
    await userEvent.click(within(row).getByRole('button', { name: 'Details of mem' }));
    expect(await screen.findByText('One, shared by every client.')).toBeTruthy();
    expect(
      screen.getByText('Suggested: it keeps a knowledge graph: every agent would read and write the same one.'),
    ).toBeTruthy();

    await userEvent.click(screen.getByRole('button', { name: 'One process per client' }));
    await waitFor(async () => expect((await stored()).mode).toBe('per-client'));
    expect(
      await screen.findByText(
        'One per client token: at most 8 at once, each stopped after 15 min without a call; 0 running.',
      ),
    ).toBeTruthy();

    await userEvent.click(screen.getByRole('button', { name: 'Share one process' }));
    await waitFor(async () => expect((await stored()).mode).toBe('shared'));
  }, 60_000);

  it('the add form sends process: per-client for a stdio server when ticked, and nothing otherwise', () => {
    const form = { ...EMPTY_FORM, id: 'mem2', command: process.execPath, args: MEMORY };
    const ticked = addInput({ ...form, perClient: true });
    expect(ticked.ok && ticked.input.process).toEqual({ mode: 'per-client' });
    const plain = addInput(form);
    expect(plain.ok && 'process' in plain.input).toBe(false);
  });
});
