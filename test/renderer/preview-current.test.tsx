// @vitest-environment jsdom
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { Preview } from '../../main/contract/staged.ts';
import { PreviewView } from '../../renderer/screens/approvals/preview-view.tsx';

/** An upstream write's preview on the desk: what its target is now (docs/staging.md, "What an upstream write changes"). */
afterEach(cleanup);

describe('the preview of an upstream write', () => {
  it("shows a file's diff with the desk's summary of it", () => {
    const preview = Preview.parse({
      summary: 'write_file /n/a.md on upstream fs',
      kind: 'diff',
      changes: [{ field: '/n/a.md', before: '@@ line 1 @@\n  one\n- two', after: '@@ line 1 @@\n  one\n+ TWO' }],
      current: { summary: 'a.md: 1 line changed', version: 'v', unavailable: null },
    });
    render(<PreviewView preview={preview} idBase="p" />);
    expect(screen.getByText('a.md: 1 line changed')).toBeTruthy();
    const row = screen.getByRole('row', { name: /\/n\/a\.md/ });
    expect(within(row).getByText(/- two/)).toBeTruthy();
    expect(within(row).getByText(/\+ TWO/)).toBeTruthy();
  });

  it('shows what each read found beside the arguments, and why there is no view when a read failed', () => {
    const states = Preview.parse({
      summary: 'move_file /n/a → /n/b on upstream fs',
      kind: 'arguments',
      arguments: { upstream: 'fs', tool: 'move_file', arguments: { source: '/n/a', destination: '/n/b' } },
      current: {
        summary: 'now: source (get_file_info), destination (get_file_info) read',
        version: 'v',
        unavailable: null,
        states: [
          { label: 'source (get_file_info)', text: 'size: 7' },
          { label: 'destination (get_file_info)', text: 'answered an error: ENOENT' },
        ],
      },
    });
    render(<PreviewView preview={states} idBase="m" />);
    expect(screen.getByRole('heading', { name: 'source (get_file_info), now' })).toBeTruthy();
    expect(screen.getByLabelText('destination (get_file_info), now').textContent).toBe('answered an error: ENOENT');
    expect(screen.getByLabelText('Arguments sent to the tool').textContent).toContain('"destination": "/n/b"');
    cleanup();
    const failed = Preview.parse({
      summary: 'write_file /x on upstream p',
      kind: 'arguments',
      arguments: {},
      current: {
        summary: 'preview unavailable: read_text_file did not answer within 5 s',
        version: null,
        unavailable: 'preview unavailable: read_text_file did not answer within 5 s',
      },
    });
    render(<PreviewView preview={failed} idBase="f" />);
    expect(screen.getByText('preview unavailable: read_text_file did not answer within 5 s')).toBeTruthy();
  });
});
