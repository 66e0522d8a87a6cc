// @vitest-environment jsdom
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Approvals } from '../../renderer/screens/approvals/approvals.tsx';
import { clockTimers } from '../../renderer/lib/clock.ts';
import { FakeApi, makeStaged } from './fake-api.ts';
import { PRINCIPALS } from '../../main/contract/index.ts';
import { renderWith } from './render.tsx';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const rows = () => screen.queryAllByRole('listitem').filter((li) => li.hasAttribute('data-id'));

describe('Approvals', () => {
  it('shows a loading state until the list arrives', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1)] }).hold('staged.list');
    renderWith(fake, <Approvals />);
    expect(screen.getByRole('status').textContent).toMatch(/Loading staged writes/);
    fake.release('staged.list');
    expect(await screen.findByText('Update page 1')).toBeTruthy();
  });

  it('shows an error with a retry that recovers', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1)] }).fail('staged.list', 'service_unavailable', 'service down');
    renderWith(fake, <Approvals />);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('service down');
    expect(alert.textContent).toContain('service_unavailable');
    fake.heal('staged.list');
    await userEvent.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('Update page 1')).toBeTruthy();
  });

  it('approving names the preview the row showed; a write whose token was revoked or narrowed away offers only Discard', async () => {
    const fake = new FakeApi({
      staged: [makeStaged(1, { preview_hash: 'c'.repeat(64) }), { ...makeStaged(2), blocked: 'token_revoked' }],
    });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    const [open, blocked] = rows();
    expect(within(blocked!).queryByRole('button', { name: 'Approve' })).toBeNull();
    expect(within(blocked!).getByRole('button', { name: 'Discard' })).toBeTruthy();
    expect(blocked!.textContent).toMatch(/was revoked: it can no longer be approved/);
    await userEvent.click(within(open!).getByRole('button', { name: 'Approve' }));
    await waitFor(() =>
      expect(fake.callsTo('staged.confirm')).toEqual([{ id: 'stg_0001', preview_hash: 'c'.repeat(64) }]),
    );
  });

  it('a write the policy now forbids offers only Discard and says which policy forbids it', async () => {
    const reason = "calling pages_update is forbidden by policy 'no-title-changes'";
    const fake = new FakeApi({
      staged: [{ ...makeStaged(1), blocked: 'policy_denied', blocked_reason: reason }, makeStaged(2)],
    });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    const [blocked, open] = rows();
    expect(within(blocked!).queryByRole('button', { name: 'Approve' })).toBeNull();
    expect(within(blocked!).getByRole('button', { name: 'Discard' })).toBeTruthy();
    expect(blocked!.textContent).toContain('The policy in force now forbids this call: it cannot be approved');
    expect(blocked!.textContent).toContain(`Why: ${reason}.`);
    expect(within(open!).getByRole('button', { name: 'Approve' })).toBeTruthy();
    expect(open!.textContent).not.toContain('forbids');
  });

  it('says so when nothing is waiting', async () => {
    renderWith(new FakeApi(), <Approvals />);
    expect(await screen.findByText(/Nothing is waiting for approval/)).toBeTruthy();
    expect(screen.getByText('No decisions yet.')).toBeTruthy();
  });

  it('shows who asked, the field-by-field diff of the selected write and a countdown', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1), makeStaged(2)] });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    expect(rows()).toHaveLength(2);
    const first = rows()[0]!;
    expect(first.getAttribute('aria-current')).toBe('true');
    expect(first.textContent).toContain('Claude Desktop');
    await waitFor(() => expect(first.textContent).toContain('for user admin'));
    expect(first.textContent).toContain('claude-ai/1.0');
    expect(first.textContent).toContain('page:1');
    expect(within(first).getByText(/^1[34]:\d\d left$/)).toBeTruthy();
    const diff = within(first).getByRole('table');
    const cells = within(diff)
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells).toEqual(['Page 1', 'Page 1 v2']);
    // the second row is collapsed: no diff rendered until selected
    expect(within(rows()[1]!).queryByRole('table')).toBeNull();
  });

  it('shows a line diff for long text fields and pretty-printed arguments for upstream tools', async () => {
    const body = (n: number) =>
      Array.from({ length: 12 }, (_, i) => `line ${i}${i === n ? ' changed' : ''}`).join('\n');
    const fake = new FakeApi({
      staged: [
        makeStaged(1, {
          preview: {
            summary: 'Rewrite body',
            kind: 'diff',
            changes: [{ field: 'content', before: body(-1), after: body(5) }],
          },
        }),
        makeStaged(2, {
          tool: 'github.create_issue',
          preview: {
            summary: 'Create an issue',
            kind: 'arguments',
            changes: [],
            arguments: { repo: 'a/b', title: 'Bug' },
          },
        }),
      ],
    });
    renderWith(fake, <Approvals />);
    await screen.findByText('Rewrite body');
    const diff = screen.getByLabelText('Changes to content, line by line');
    expect(diff.textContent).toContain('removed: - line 5');
    expect(diff.textContent).toContain('added: + line 5 changed');
    expect(diff.textContent).toMatch(/unchanged lines/);
    await userEvent.click(screen.getByRole('button', { name: /Create an issue/ }));
    expect(screen.getByText(/Arguments sent to the tool/)).toBeTruthy();
    expect(document.querySelector('pre.code-block')?.textContent).toBe('{\n  "repo": "a/b",\n  "title": "Bug"\n}');
  });

  it("shows a plugin's pre-clipped hunks side by side instead of diffing them again", async () => {
    const fake = new FakeApi({
      staged: [
        makeStaged(1, {
          preview: {
            summary: 'Long edit',
            kind: 'diff',
            changes: [
              {
                field: 'content',
                before: '@@ line 40 @@\n  context\n- old line',
                after: '@@ line 40 @@\n  context\n+ new line',
              },
            ],
          },
        }),
      ],
    });
    renderWith(fake, <Approvals />);
    await screen.findByText('Long edit');
    const cells = within(screen.getByRole('table')).getAllByRole('cell');
    expect(cells[0]!.querySelector('.diff-del')?.textContent).toBe('removed: - old line\n');
    expect(cells[1]!.querySelector('.diff-add')?.textContent).toBe('added: + new line\n');
    expect(cells[1]!.querySelector('.diff-skip')?.textContent).toBe('@@ line 40 @@\n');
  });

  it('approves with the button: the core is called, the row leaves, the history records it', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1), makeStaged(2)] });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    await userEvent.click(within(rows()[0]!).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(fake.callsTo('staged.confirm')).toEqual([{ id: 'stg_0001' }]);
    expect(rows()[0]!.getAttribute('aria-current')).toBe('true');
    const history = screen.getByRole('region', { name: 'Recent decisions' });
    expect(within(history).getByText('approved')).toBeTruthy();
    expect(within(history).getByText('Update page 1')).toBeTruthy();
    expect(screen.getByText('Approved: Update page 1')).toBeTruthy();
  });

  it('moves with j/k and approves or discards with a/d', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1), makeStaged(2), makeStaged(3)] });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    const user = userEvent.setup();
    await user.keyboard('j');
    expect(rows()[1]!.getAttribute('aria-current')).toBe('true');
    expect(document.activeElement?.textContent).toContain('Update page 2');
    await user.keyboard('a');
    await waitFor(() => expect(fake.callsTo('staged.confirm')).toEqual([{ id: 'stg_0002' }]));
    await waitFor(() => expect(rows()).toHaveLength(2));
    // the selection moved on to the next row and kept the keyboard focus
    expect(rows()[1]!.getAttribute('aria-current')).toBe('true');
    expect(document.activeElement?.textContent).toContain('Update page 3');
    await user.keyboard('k');
    await user.keyboard('d');
    await waitFor(() => expect(fake.callsTo('staged.discard')).toEqual([{ id: 'stg_0001' }]));
    await waitFor(() => expect(rows()).toHaveLength(1));
  });

  it('ignores shortcuts typed into a field', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1)] });
    renderWith(
      fake,
      <>
        <input aria-label="elsewhere" />
        <Approvals />
      </>,
    );
    await screen.findByText('Update page 1');
    await userEvent.type(screen.getByLabelText('elsewhere'), 'ad');
    expect(fake.callsTo('staged.confirm')).toEqual([]);
    expect(fake.callsTo('staged.discard')).toEqual([]);
  });

  it('shows a new staged write the moment it is announced, without reloading', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1)] });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    act(() => fake.emit({ type: 'staged', item: makeStaged(7) }));
    expect(await screen.findByText('Update page 7')).toBeTruthy();
    expect(fake.callsTo('staged.list')).toHaveLength(1);
    // a decision made elsewhere (the tray, the CLI) moves it to the history
    act(() =>
      fake.emit({
        type: 'staged',
        item: makeStaged(7, { status: 'discarded', decided_at: new Date().toISOString(), decided_by: PRINCIPALS.tray }),
      }),
    );
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(within(screen.getByRole('region', { name: 'Recent decisions' })).getByText('tray')).toBeTruthy();
  });

  it('explains a stale preview on the row and keeps it', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1)] }).fail('staged.confirm', 'stale_preview', 'target changed');
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    await userEvent.click(screen.getByRole('button', { name: 'Approve' }));
    const alert = await within(rows()[0]!).findByRole('alert');
    expect(alert.textContent).toMatch(/target changed after this preview/);
    expect(rows()).toHaveLength(1);
  });

  it('keeps a refused write on its row with the reason, after the service moved it to history, until dismissed', async () => {
    const fake = new FakeApi({ staged: [makeStaged(1), makeStaged(2)] });
    // As the real service does: the confirm fails, and the write is settled as failed (an event and the list say so).
    fake.fail('staged.confirm', 'stale_preview', 'page:1 changed since the preview was made');
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    await userEvent.click(within(rows()[0]!).getByRole('button', { name: 'Approve' }));
    act(() =>
      fake.emit({
        type: 'staged',
        item: makeStaged(1, {
          status: 'failed',
          error_code: 'stale_preview',
          decided_at: new Date().toISOString(),
          decided_by: PRINCIPALS.appConsole,
        }),
      }),
    );
    const row = rows()[0]!;
    expect(row.getAttribute('data-id')).toBe('stg_0001');
    expect(within(row).getByRole('alert').textContent).toMatch(
      /Not applied: the target changed after this preview was made/,
    );
    expect(row.getAttribute('aria-current')).toBe('true');
    expect(within(row).queryByRole('button', { name: 'Approve' })).toBeNull();
    // the shortcut does nothing on it either
    await userEvent.keyboard('a');
    expect(fake.callsTo('staged.confirm')).toHaveLength(1);
    await userEvent.click(within(row).getByRole('button', { name: 'Dismiss' }));
    await waitFor(() => expect(rows().map((r) => r.getAttribute('data-id'))).toEqual(['stg_0002']));
    expect(rows()[0]!.getAttribute('aria-current')).toBe('true');
    // and the history now says what happened, in words, with the code as a detail
    const history = screen.getByRole('region', { name: 'Recent decisions' });
    expect(history.textContent).toMatch(/failed: the target changed after the preview was made \(stale_preview\)/);
  });

  it('says when other pending writes change the same target', async () => {
    renderWith(
      new FakeApi({
        staged: [
          makeStaged(1, { target: 'page:7' }),
          makeStaged(2, { target: 'page:7' }),
          makeStaged(3, { target: 'page:8' }),
        ],
      }),
      <Approvals />,
    );
    await screen.findByText('Update page 1');
    expect(within(rows()[0]!).getByText(/1 other pending write changes/).textContent).toMatch(
      /page:7 too: approving this one makes that one stale/,
    );
    expect(within(rows()[2]!).queryByText(/other pending write/)).toBeNull();
  });

  it('says nothing of staleness for writes not bound to a version (two upstream writes to one server)', async () => {
    // b.txt applies fine after a.txt: an upstream write's target is the server, with no version to go stale
    const upstreamWrite = (i: number, path: string) =>
      makeStaged(i, {
        tool: 'fs__write_file',
        plugin: 'fs',
        payload: { path, content: 'x' },
        preview: { summary: `write_file ${path} on upstream fs`, kind: 'arguments', changes: [] },
        target: 'upstream:fs',
        target_version: null,
      });
    renderWith(new FakeApi({ staged: [upstreamWrite(1, '/w/a.txt'), upstreamWrite(2, '/w/b.txt')] }), <Approvals />);
    await screen.findByText('write_file /w/a.txt on upstream fs');
    expect(rows()).toHaveLength(2);
    for (const row of rows()) expect(within(row).queryByText(/other pending write/)).toBeNull();
  });

  it('says when two upstream writes change the file their previews read', async () => {
    // a confirm reads the file again: once one is applied, the other's preview no longer matches it
    const fileWrite = (i: number, path: string) =>
      makeStaged(i, {
        tool: 'fs__write_file',
        plugin: 'fs',
        payload: { path, content: `x${i}` },
        preview: {
          summary: `write_file ${path} on upstream fs`,
          kind: 'diff',
          changes: [{ field: path, before: '@@ line 1 @@\n- a', after: `@@ line 1 @@\n+ x${i}` }],
          current: { summary: 'a.txt: 1 line changed', version: 'v1', unavailable: null, states: [] },
        },
        target: 'upstream:fs',
        target_version: null,
      });
    renderWith(
      new FakeApi({ staged: [fileWrite(1, '/w/a.txt'), fileWrite(2, '/w/a.txt'), fileWrite(3, '/w/b.txt')] }),
      <Approvals />,
    );
    await screen.findAllByText('write_file /w/a.txt on upstream fs');
    expect(within(rows()[0]!).getByText(/1 other pending write changes/).textContent).toMatch(
      /\/w\/a\.txt too: approving this one makes that one stale/,
    );
    expect(within(rows()[2]!).queryByText(/other pending write/)).toBeNull();
  });

  it('names the client, and says when the name is a guess', async () => {
    renderWith(
      new FakeApi({
        staged: [
          makeStaged(1, { client: 'claude-ai', client_source: 'request' }),
          makeStaged(2, { client: 'cursor', client_source: 'remembered' }),
        ],
      }),
      <Approvals />,
    );
    await screen.findByText('Update page 1');
    expect(rows()[0]!.textContent).toContain('via claude-ai');
    expect(rows()[0]!.textContent).not.toContain('guess');
    expect(rows()[1]!.textContent).toContain(
      'via cursor (a guess: the last client that introduced itself with this token)',
    );
  });

  it('shows control characters in client-supplied names as escapes', async () => {
    renderWith(
      new FakeApi({
        staged: [
          makeStaged(1, {
            tool: 'pages\u202eetadpu',
            preview: { summary: 'Title\nInjected line', kind: 'diff', changes: [] },
            client: 'evil\u0007',
          }),
        ],
      }),
      <Approvals />,
    );
    const row = (await screen.findAllByRole('listitem')).find((li) => li.hasAttribute('data-id'))!;
    expect(row.textContent).toContain('pages\\u{202E}etadpu');
    expect(row.textContent).toContain('Title\\u{000A}Injected line');
    expect(row.textContent).toContain('evil\\u{0007}');
    // eslint-disable-next-line no-control-regex
    expect(row.textContent).not.toMatch(/[\u0000-\u001f\u202e]/);
  });

  it('cannot approve a write once its countdown has run out', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const now = Date.now();
    const fake = new FakeApi({ staged: [makeStaged(1, { expires_at: new Date(now + 3_000).toISOString() }, now)] });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 1');
    const approve = within(rows()[0]!).getByRole('button', { name: 'Approve' }) as HTMLButtonElement;
    expect(approve.disabled).toBe(false);
    // the shared clock is running (its effect has subscribed) before time moves
    await waitFor(() => expect(clockTimers()).toBe(1));
    act(() => vi.advanceTimersByTime(4_000));
    expect((within(rows()[0]!).getByRole('button', { name: 'Approve' }) as HTMLButtonElement).disabled).toBe(true);
    act(() => {
      window.dispatchEvent(new KeyboardEvent('keydown', { key: 'a' }));
    });
    expect(fake.callsTo('staged.confirm')).toEqual([]);
  });

  it('counts down on one shared timer, however many rows there are', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const now = Date.now();
    const fake = new FakeApi({
      staged: Array.from({ length: 40 }, (_, i) =>
        makeStaged(i, { expires_at: new Date(now + 65_000 + i * 60_000).toISOString() }, now),
      ),
    });
    renderWith(fake, <Approvals />);
    await screen.findByText('Update page 0');
    // one timer for all 40 rows, once their effects have subscribed (a busy machine may paint first)
    await waitFor(() => expect(clockTimers()).toBe(1));
    expect(within(rows()[0]!).getByText('1:05 left')).toBeTruthy();
    act(() => vi.advanceTimersByTime(6_000));
    expect(within(rows()[0]!).getByText('0:59 left').className).toContain('soon');
    act(() => vi.advanceTimersByTime(60_000));
    expect(within(rows()[0]!).getByText('expired')).toBeTruthy();
    cleanup();
    expect(clockTimers()).toBe(0);
  });
});
