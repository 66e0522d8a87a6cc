// @vitest-environment jsdom
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { apiFrom } from '../../renderer/api/api-from.ts';
import { PolicyScreen } from '../../renderer/screens/policy/policy.tsx';
import { startTestService } from '../helpers/service.ts';
import { renderWith } from './render.tsx';

/** The Policy screen on a real service and engine: the policy in force, a refused edit, the test form. */
let svc: Awaited<ReturnType<typeof startTestService>>;
let tokenId: string;

beforeAll(async () => {
  svc = await startTestService();
  tokenId = (await svc.createToken({ label: 'screen bot', user: 'admin' })).record.id;
}, 60_000);
afterAll(async () => svc?.cleanup());
afterEach(cleanup);

const realApi = () => ({
  api: apiFrom(
    (action, input) => svc.dispatch(action as never, input as never) as never,
    (listener) => svc.events.subscribe((e) => listener(structuredClone(e))),
  ),
});

describe('Policy', () => {
  it("shows the default policy; an invalid edit is refused with the validator's message and nothing changes", async () => {
    renderWith(realApi(), <PolicyScreen />);
    expect(await screen.findByText(/shipped default policy/, undefined, { timeout: 15_000 })).toBeTruthy();
    expect(screen.getByText(/role-capabilities, role-capabilities-surfaces, disabled-tools/)).toBeTruthy();
    const editor = screen.getByLabelText('Cedar policy') as HTMLTextAreaElement;
    fireEvent.change(editor, {
      target: { value: 'permit (principal, action, resource) when { resource.colour == "red" };' },
    });
    await userEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText(/does not validate.*colour/, undefined, { timeout: 15_000 })).toBeTruthy();
    const r = await svc.dispatch('policy.get', {});
    expect(r.ok && r.data.source).toBe('default');
  });

  it('the test form tells what a call would do and which policies decide it', async () => {
    renderWith(realApi(), <PolicyScreen />);
    await screen.findByRole('option', { name: `screen bot (${tokenId})` }, { timeout: 15_000 });
    await userEvent.selectOptions(screen.getByLabelText('Token'), tokenId);
    await screen.findByRole('option', { name: 'pages_update' }, { timeout: 15_000 });
    await userEvent.selectOptions(screen.getByLabelText('Tool'), 'pages_update');
    fireEvent.change(screen.getByLabelText('Arguments (JSON)'), {
      target: { value: '{"id": 1, "title": "/a/../b"}' },
    });
    await userEvent.click(screen.getByRole('button', { name: 'Explain' }));
    await waitFor(() => expect(screen.getByText(/is staged for approval/)).toBeTruthy(), { timeout: 15_000 });
    expect(screen.getByText(/call: allow \(role-capabilities\)/)).toBeTruthy();
    expect(screen.getByText('argument values the policy reads: id = "1", title = "/b"')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Arguments (JSON)'), { target: { value: '[1' } });
    await userEvent.click(screen.getByRole('button', { name: 'Explain' }));
    expect(await screen.findByText(/not JSON/)).toBeTruthy();
  });
});
