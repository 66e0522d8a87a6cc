// @vitest-environment jsdom
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PRINCIPALS } from '../../main/contract/index.ts';
import { Approvals } from '../../renderer/screens/approvals/approvals.tsx';
import { openCore, type Core } from '../helpers/core.ts';
import { coreApi } from './core-api.ts';
import { renderWith } from './render.tsx';

// The approval desk on the real core (in-memory stores) instead of the fake
// API: what the screen shows and does is what the service would do.

let core: Core;
let agentToken: string;
beforeEach(async () => {
  core = await openCore();
  agentToken = (await core.tokenFor('writer', 'editor')).record.id;
});
afterEach(() => cleanup());

const rows = () => screen.queryAllByRole('listitem').filter((li) => li.hasAttribute('data-id'));
const title = (id: number) => core.siteStore.read().pages.find((p) => p.id === id)?.title;

async function stage(id: number, newTitle: string): Promise<string> {
  const out = await core.pipeline.call('pages_update', { id, title: newTitle }, core.ctxOf(agentToken));
  if (out.kind !== 'result') throw new Error(out.message);
  return (out.output.structured as { staged_id: string }).staged_id;
}

describe('Approvals on the real core', () => {
  it('approving applies the write once, as the console in the app window, and the history says who', async () => {
    const first = await stage(1, 'Approved in the console');
    await stage(2, 'Left waiting');
    renderWith({ api: coreApi(core) }, <Approvals />);
    await waitFor(() => expect(rows()).toHaveLength(2));
    const home = rows().find((r) => r.textContent?.includes("'Home' (#1)"))!;
    await userEvent.click(within(home).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(title(1)).toBe('Approved in the console');
    expect(core.staging.get(first)).toMatchObject({ status: 'confirmed', decided_by: PRINCIPALS.appConsole });
    const history = screen.getByRole('region', { name: 'Recent decisions' });
    expect(within(history).getByText('console')).toBeTruthy();
  });

  it('what an agent wrote into a preview cannot reorder, hide or fake text in the diff: control characters and bidi overrides show as escapes', async () => {
    // A contributor's agent stages a page whose title reads one way and is stored another (U+202E reverses what follows),
    // with a bell and a carriage return in the excerpt and a bidi isolate in the body; and an update of a long body.
    const created = await core.pipeline.call(
      'pages_create',
      { title: 'Invoice \u202egpj.exe', excerpt: 'ok\u0007\rfake', content: '# Body\n\nline \u2066two\u2069' },
      core.ctxOf(agentToken),
    );
    if (created.kind !== 'result') throw new Error(created.message);
    const longBody = (tail: string) =>
      `# Home\n\n${Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n')}\n${tail}`;
    const base = core.siteStore.read().pages.find((p) => p.id === 1)!;
    await core.siteStore.update((d) => {
      Object.assign(
        d.pages.find((p) => p.id === 1)!,
        { content: longBody('end'), version: base.version + 1 },
      );
    });
    const updated = await core.pipeline.call(
      'pages_update',
      { id: 1, content: longBody('end \u202eevil'), excerpt: 'short\nsecond \u202eline' },
      core.ctxOf(agentToken),
    );
    if (updated.kind !== 'result') throw new Error(updated.message);
    renderWith({ api: coreApi(core) }, <Approvals />);
    await waitFor(() => expect(rows()).toHaveLength(2));
    const seen: string[] = [];
    for (const i of [0, 1]) {
      const row = rows()[i]!;
      if (!within(row).queryByRole('table')) await userEvent.click(within(row).getAllByRole('button')[0]!);
      const table = await within(rows()[i]!).findByRole('table');
      // eslint-disable-next-line no-control-regex
      expect(table.textContent).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
      seen.push(rows()[i]!.textContent ?? '');
    }
    const text = seen.join('\n');
    expect(text).toContain('Invoice \\u{202E}gpj.exe');
    expect(text).toContain('ok\\u{0007}\\u{000D}fake');
    expect(text).toContain('line \\u{2066}two\\u{2069}');
    expect(text).toContain('end \\u{202E}evil');
    expect(text).toContain('second \\u{202E}line');
  });

  it('a write staged while the page changed is refused as stale, and the refusal is shown', async () => {
    const stale = await stage(1, 'Stale by the time it is approved');
    const other = await stage(1, 'Approved first, elsewhere');
    expect((await core.invoke('staged.confirm', { id: other }, PRINCIPALS.tray)).ok).toBe(true);
    renderWith({ api: coreApi(core) }, <Approvals />);
    await waitFor(() => expect(rows()).toHaveLength(1));
    await userEvent.click(within(rows()[0]!).getByRole('button', { name: 'Approve' }));
    const alert = await within(rows()[0]!).findByRole('alert');
    expect(alert.textContent).toMatch(/target changed after this preview/);
    expect(core.staging.get(stale).status).toBe('failed');
    expect(title(1)).toBe('Approved first, elsewhere');
  });
});
