// @vitest-environment jsdom
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage, RecipeView } from '../../main/contract/index.ts';
import { apiFrom } from '../../renderer/api/api-from.ts';
import { Upstreams } from '../../renderer/screens/upstreams/upstreams.tsx';
import { startTestService } from '../helpers/service.ts';
import { FILESYSTEM } from '../plugins/upstream/upstream-world.ts';
import { renderWith } from './render.tsx';

/**
 * The Upstreams screen's preview recipes against the real service and the real server-filesystem: the
 * shipped ones shown as used, a person's own written in the recipe's fields, refused with the contract's or
 * the service's reason (a read that is a write), saved through upstreams.recipe_set (audited), removed again.
 */
let svc: Awaited<ReturnType<typeof startTestService>>;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-recipes-ui-'));
  svc = await startTestService();
  const r = await svc.dispatch('upstreams.add', {
    id: 'fs',
    transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
  });
  if (!r.ok) throw new Error(r.message);
}, 60_000);
afterAll(async () => {
  await svc?.cleanup();
  await rm(dir, { recursive: true, force: true });
});
afterEach(cleanup);

const realApi = () => ({
  api: apiFrom(
    (action, input) => svc.dispatch(action as never, input as never) as never,
    (listener) => svc.events.subscribe((e) => listener(structuredClone(e))),
  ),
});
const stored = async () => {
  const r = await svc.dispatch('upstreams.recipes', { id: 'fs' });
  if (!r.ok) throw new Error(r.message);
  return r.data as RecipeView[];
};
const rows = () =>
  within(screen.getByRole('table', { name: 'Preview recipes of fs' }))
    .getAllByRole('row')
    .slice(1)
    .map((tr) =>
      within(tr)
        .getAllByRole('cell')
        .slice(0, 4)
        .map((td) => td.textContent),
    );

describe('the preview recipes of an upstream', () => {
  it('shows the shipped ones; a person writes their own in its fields, refused with why, saved, then removed', async () => {
    renderWith(realApi(), <Upstreams />);
    const row = (await screen.findByText('fs')).closest('tr')!;
    await userEvent.click(within(row).getByRole('button', { name: 'Details of fs' }));
    await screen.findByRole('table', { name: 'Preview recipes of fs' });
    expect(rows()).toEqual([
      [
        'write_file',
        'shipped',
        'file_write via read_text_file:path=path or read_file:path=path (content=content, path=path); size by get_file_info:path=path',
        'yes',
      ],
      [
        'edit_file',
        'shipped',
        'file_edit via read_text_file:path=path or read_file:path=path (edits=edits, path=path); size by get_file_info:path=path',
        'yes',
      ],
      [
        'move_file',
        'shipped',
        'state via get_file_info:path=source@source + get_file_info:path=destination@destination',
        'yes',
      ],
      ['create_directory', 'shipped', 'state via get_file_info:path=path', 'yes'],
    ]);

    await userEvent.click(screen.getByRole('button', { name: 'Write your own for write_file' }));
    const editor = screen.getByRole('group', { name: 'Edit a preview recipe' });
    expect((within(editor).getByLabelText(/^Reads/) as HTMLTextAreaElement).value).toBe('read_text_file:path=path');
    // what the contract refuses is said at once and never sent
    await userEvent.clear(within(editor).getByLabelText('Argument holding the new text'));
    await userEvent.click(within(editor).getByRole('button', { name: 'Save the recipe' }));
    expect((await within(editor).findByRole('alert')).textContent).toBe(
      "content: a file_write recipe names the write's content argument",
    );
    // what only the service knows (how the person classified the tool) comes back from it
    await userEvent.selectOptions(within(editor).getByLabelText(/^It shows/), 'state');
    const reads = within(editor).getByLabelText(/^Reads/);
    await userEvent.clear(reads);
    await userEvent.type(reads, 'create_directory:path=path');
    await userEvent.click(within(editor).getByRole('button', { name: 'Save the recipe' }));
    await within(editor).findByText(/'create_directory' is not classified as a read, and a preview calls only reads/);
    expect((await stored()).every((v) => v.source === 'shipped')).toBe(true);

    await userEvent.clear(reads);
    await userEvent.type(reads, 'get_file_info:path=path@file');
    await userEvent.click(within(editor).getByRole('button', { name: 'Save the recipe' }));
    await waitFor(async () =>
      expect((await stored()).find((v) => v.tool === 'write_file')).toMatchObject({
        source: 'person',
        overrides_shipped: true,
        problem: null,
        recipe: {
          tool: 'write_file',
          shows: 'state',
          reads: [[{ tool: 'get_file_info', args: { path: 'path' }, label: 'file' }]],
        },
      }),
    );
    await waitFor(() =>
      expect(rows()[0]).toEqual([
        'write_file',
        'yours (instead of shipped)',
        'state via get_file_info:path=path@file',
        'yes',
      ]),
    );
    const audit = await svc.dispatch('audit.query', { tool: 'upstreams.recipe_set' });
    expect(audit.ok && (audit.data as AuditPage).entries[0]).toMatchObject({ target: 'fs__write_file' });

    await userEvent.click(screen.getByRole('button', { name: 'Remove the recipe for write_file' }));
    await waitFor(async () => expect((await stored()).every((v) => v.source === 'shipped')).toBe(true));
    await waitFor(() => expect(rows()[0]![1]).toBe('shipped'));
  }, 60_000);
});
