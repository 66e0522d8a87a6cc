import { describe, expect, it } from 'vitest';
import { StagedPayload } from '../../main/contract/staged.ts';
import { stagedText } from '../../main/cli/staged-text.ts';

// What `gatehouse staged show` prints, from a record as the admin API sends it (JSON: a missing "before" is absent, not null).
const record = (changes: unknown[]) =>
  StagedPayload.parse(
    JSON.parse(
      JSON.stringify({
        id: 'stg_1',
        tool: 'pages_create',
        plugin: 'site',
        payload: {},
        user_id: 'u1',
        token_id: null,
        created: '2026-01-01T00:00:00.000Z',
        expires_at: '2026-01-01T00:15:00.000Z',
        payload_hash: 'h',
        target: null,
        target_version: null,
        preview: { summary: "Create draft page 'Hello' at /hello/", kind: 'diff', changes },
      }),
    ),
  );

describe('staged show text', () => {
  it('prints "(none)" for the before of a creation and "(removed)" for a field that goes, as the console does', () => {
    const text = stagedText(
      record([
        { field: 'title', after: 'Hello' },
        { field: 'excerpt', before: 'old' },
      ]),
    );
    expect(text).toContain('  title:\n    - (none)\n    + "Hello"');
    expect(text).toContain('  excerpt:\n    - "old"\n    + (removed)');
    expect(text).not.toContain('undefined');
  });

  it('still shows a value that is present but null or empty as the value', () => {
    const text = stagedText(record([{ field: 'excerpt', before: '', after: null }]));
    expect(text).toContain('    - ""\n    + null');
  });

  it('names why a pending write cannot be approved; for a policy, the refusal with its policy ids', () => {
    const text = stagedText({
      ...record([]),
      blocked: 'policy_denied',
      blocked_reason: "calling pages_create is forbidden by policy 'no-drafts'",
    });
    expect(text).toContain('cannot be approved: the policy in force now forbids the call (policy_denied)');
    expect(text).toContain("  calling pages_create is forbidden by policy 'no-drafts'");
    expect(stagedText({ ...record([]), blocked: 'token_narrowed' })).toContain(
      'cannot be approved: its token may no longer make it (token_narrowed)',
    );
  });

  it('suggests confirm only for a write that can still be approved, never for a failed or decided one', () => {
    const hashed = { ...record([]), preview_hash: 'p'.repeat(64) };
    expect(stagedText(hashed)).toContain(`gatehouse staged confirm stg_1 --preview-hash ${'p'.repeat(64)}`);
    for (const status of ['failed', 'confirmed', 'discarded', 'expired'] as const) {
      const text = stagedText({ ...hashed, status, error_code: status === 'failed' ? 'upstream_error' : null });
      expect(text, status).not.toContain('staged confirm');
      expect(text, status).toContain(`preview ${'p'.repeat(64)}`);
    }
    expect(stagedText({ ...hashed, blocked: 'token_revoked' })).not.toContain('staged confirm');
  });
});
