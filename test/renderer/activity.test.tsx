// @vitest-environment jsdom
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Activity } from '../../renderer/screens/activity/activity.tsx';
import { FakeApi, auditCursor, makeAudit } from './fake-api.ts';
import { renderWith } from './render.tsx';
import type { AuditExportSaved } from '../../main/contract/api.ts';
import type { Result } from '../../main/contract/errors.ts';

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const bodyRows = () =>
  within(screen.getByRole('region', { name: 'Audit entries' }))
    .getAllByRole('row')
    .slice(1);

describe('Activity', () => {
  it('shows loading, then an empty log', async () => {
    const fake = new FakeApi().hold('audit.query');
    renderWith(fake, <Activity />);
    expect(screen.getByText(/Loading the audit log/)).toBeTruthy();
    fake.release('audit.query');
    expect(await screen.findByText(/No audit entries match/)).toBeTruthy();
  });

  it('shows an error', async () => {
    renderWith(new FakeApi().fail('audit.query', 'internal_error', 'disk full'), <Activity />);
    expect((await screen.findByRole('alert')).textContent).toContain('disk full');
  });

  it('lists entries newest first and pages back with the cursor', async () => {
    const fake = new FakeApi({ audit: Array.from({ length: 60 }, (_, i) => makeAudit(i)) });
    renderWith(fake, <Activity />);
    await screen.findByRole('region', { name: 'Audit entries' });
    expect(bodyRows()).toHaveLength(50);
    expect(bodyRows()[0]!.textContent).toContain('page:59');
    await userEvent.click(screen.getByRole('button', { name: 'Load older entries' }));
    await waitFor(() => expect(bodyRows()).toHaveLength(60));
    expect(fake.callsTo('audit.query')[1]).toEqual({ limit: 50, cursor: auditCursor(50) });
    expect(screen.getByText(/beginning of the log/)).toBeTruthy();
  });

  it('filters through AuditQuery fields', async () => {
    const fake = new FakeApi({ audit: Array.from({ length: 10 }, (_, i) => makeAudit(i)) });
    renderWith(fake, <Activity />);
    await screen.findByRole('region', { name: 'Audit entries' });
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Tool'), 'pages_update');
    await user.selectOptions(screen.getByLabelText('Result'), 'staged');
    await user.selectOptions(screen.getByLabelText('User'), 'admin');
    await user.click(screen.getByRole('button', { name: 'Apply filters' }));
    await waitFor(() => expect(bodyRows()).toHaveLength(5));
    expect(fake.callsTo('audit.query').at(-1)).toEqual({
      tool: 'pages_update',
      result: 'staged',
      user_id: 'u_admin',
      limit: 50,
    });
    // users are shown by login, their id on hover
    expect(within(bodyRows()[0]!).getByTitle('u_admin').textContent).toBe('admin');
    const csv = screen.getByRole('link', { name: 'CSV' });
    expect(csv.getAttribute('href')).toBe('/export?format=csv&tool=pages_update&result=staged&user_id=u_admin');
    expect(csv.hasAttribute('download')).toBe(true);
  });

  it('filters by token label and preview (no id to type), and names the token in each row', async () => {
    const tokens = [
      {
        id: 'tok_1',
        label: 'Claude Desktop',
        user_id: 'u_admin',
        user_login: 'admin',
        preview: 'gth_…abcd',
        created: new Date().toISOString(),
        last_used: null,
        scope: { read_only: false },
      },
      {
        id: 'tok_2',
        label: 'Cursor',
        user_id: 'u_admin',
        user_login: 'admin',
        preview: 'gth_…wxyz',
        created: new Date().toISOString(),
        last_used: null,
        scope: { read_only: false },
      },
    ];
    const fake = new FakeApi({
      tokens,
      audit: [
        makeAudit(1, { token_id: 'tok_2', token_preview: 'gth_…wxyz', client: 'cursor', client_source: 'remembered' }),
      ],
    });
    renderWith(fake, <Activity />);
    await screen.findByRole('region', { name: 'Audit entries' });
    const select = screen.getByLabelText('Token');
    expect(select.tagName).toBe('SELECT');
    await waitFor(() => expect(within(select).getByRole('option', { name: 'Cursor (gth_…wxyz)' })).toBeTruthy());
    const user = userEvent.setup();
    await user.selectOptions(select, 'Cursor (gth_…wxyz)');
    await user.click(screen.getByRole('button', { name: 'Apply filters' }));
    await waitFor(() => expect(fake.callsTo('audit.query').at(-1)).toEqual({ token_id: 'tok_2', limit: 50 }));
    expect(bodyRows()[0]!.textContent).toContain('Cursor gth_…wxyz');
    expect(bodyRows()[0]!.textContent).toContain('cursor (guess)');
  });

  it('adds matching live entries at the top, and none while paused', async () => {
    const fake = new FakeApi({ audit: [makeAudit(1)] });
    renderWith(fake, <Activity />);
    await screen.findByRole('region', { name: 'Audit entries' });
    act(() => fake.emit({ type: 'audit', entry: makeAudit(100, { tool: 'pages_update', result: 'confirmed' }) }));
    await waitFor(() => expect(bodyRows()).toHaveLength(2));
    expect(bodyRows()[0]!.textContent).toContain('confirmed');
    await userEvent.click(screen.getByRole('switch', { name: 'Live updates' }));
    act(() => fake.emit({ type: 'audit', entry: makeAudit(101) }));
    expect(bodyRows()).toHaveLength(2);
    expect(fake.callsTo('audit.query')).toHaveLength(1);
  });

  it('in Electron has the app save the whole filtered export, and says where it went or why not', async () => {
    const fake = new FakeApi({ audit: Array.from({ length: 3 }, (_, i) => makeAudit(i)) });
    const asked: unknown[] = [];
    let answer: Result<AuditExportSaved> = { ok: true, data: { path: '/home/me/Downloads/a.csv', bytes: 2048 } };
    renderWith(fake, <Activity />, {
      mode: 'electron',
      exportHref: () => null,
      saveExport: async (format, filters) => {
        asked.push({ format, ...filters });
        return answer;
      },
    });
    await screen.findByRole('region', { name: 'Audit entries' });
    await userEvent.click(screen.getByRole('button', { name: 'CSV' }));
    expect((await screen.findByRole('status')).textContent).toBe(
      'Saved the whole filtered log to /home/me/Downloads/a.csv (2.0 KiB).',
    );
    expect(asked).toEqual([{ format: 'csv' }]);
    answer = { ok: false, code: 'storage_unavailable', message: 'the export could not be written to /x (ENOSPC)' };
    await userEvent.click(screen.getByRole('button', { name: 'JSONL' }));
    expect(await screen.findByText(/Export failed: the export could not be written to \/x \(ENOSPC\)/)).toBeTruthy();
    // The console never pages through the log itself to build a file.
    expect(fake.callsTo('audit.query')).toHaveLength(1);
  });
});
