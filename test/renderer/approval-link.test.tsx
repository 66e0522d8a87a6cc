// @vitest-environment jsdom
import { cleanup, screen } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalView } from '../../main/contract/index.ts';
import { ApprovalLinkPage } from '../../renderer/screens/approval-link.tsx';
import { FakeApi } from './fake-api.ts';
import { renderWith } from './render.tsx';

afterEach(cleanup);

const view = (status: ApprovalView['status']): ApprovalView => ({
  link: 'lnk_1',
  staged_id: 'stg_1',
  tool: 'fs__write_file',
  summary: 'write_file /w/a.txt on upstream fs',
  preview: { summary: 'write_file /w/a.txt on upstream fs', kind: 'arguments', changes: [] },
  target: 'upstream:fs',
  client: 'an-agent/1.0',
  token_label: 'agent',
  created: new Date(Date.now() - 60_000).toISOString(),
  expires_at: new Date(Date.now() + 14 * 60_000).toISOString(),
  status,
  preview_hash: 'p'.repeat(64),
  blocked: null,
  blocked_reason: null,
});

describe('the approval-link page', () => {
  it('once approved, does not tell a client without tasks that it learns the result from its task', async () => {
    const fake = new FakeApi();
    const api = {
      ...fake.api,
      'approval.get': async () => ({ ok: true as const, data: view('pending') }),
      'approval.confirm': async () => ({ ok: true as const, data: view('confirmed') }),
    };
    renderWith({ api: api as typeof fake.api }, <ApprovalLinkPage link="lnk_1" />);
    await userEvent.click(await screen.findByRole('button', { name: 'Approve' }));
    const done = await screen.findByRole('status');
    expect(done.textContent).toMatch(/^Approved and applied\./);
    expect(done.textContent).not.toMatch(/learns the result from its task/);
    expect(done.textContent).toContain('staged_writes_status');
  });
});
