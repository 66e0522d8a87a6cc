import { readFile, writeFile } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamToolView } from '../../../main/contract/upstreams.ts';
import type { StagedView } from '../../../main/contract/staged.ts';
import type { AuditPage } from '../../../main/contract/audit.ts';
import { consentTo, startFixtureWorld, until, type FixtureWorld, type UpstreamWorld } from './upstream-world.ts';

// An upstream write is bound to the tool definition a
// person approved. The fixture's `lookup` changes its definition at run time
// (CONTROL_FILE); once a person approves the new one, a write staged under the
// old one is refused as stale, with the hashes in the audit line.

let f: FixtureWorld;
let u: UpstreamWorld;
let client: Client;
let control: string;
let journal: string;
const toolOf = async (name: string) =>
  (await u.ok<UpstreamToolView[]>('GET', 'upstreams/b/tools')).find((t) => t.tool === name)!;

beforeAll(async () => {
  f = await startFixtureWorld({ prefix: 'gh-binding-', id: 'b', control: true });
  ({ u, client, control, journal } = f);
}, 120_000);
afterAll(() => f?.stop());

describe('an upstream write is bound to the pinned definition', () => {
  it('records the definition hash and masks a secret in the preview; confirm after the definition changed (and was approved again) is refused as stale', async () => {
    // lookup asks to be a write; a person approves that: it is now staged like any write.
    await writeFile(control, JSON.stringify({ readOnly: false }));
    await until(async () => (await toolOf('lookup')).state === 'quarantined', 10_000, 'the hint flip to quarantine it');
    await u.ok('POST', 'upstreams/b/review', await consentTo(u, 'b', { tools: ['lookup'] }));
    const pinned = (await toolOf('lookup')).hash!;

    const secret = `sk-proj-${'Zx9Qw8Er7Ty6'.repeat(4)}`;
    const r = await client.callTool({ name: 'b__lookup', arguments: { word: `key ${secret}` } });
    const staged = r.structuredContent as { status: string; staged_id: string };
    expect(staged.status).toBe('pending_approval');
    expect(JSON.stringify(r)).not.toContain(secret);
    const shown = await u.ok<StagedView>('GET', `staged/${staged.staged_id}`);
    expect(shown).toMatchObject({ definition_hash: pinned, preview_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(JSON.stringify(shown)).not.toContain(secret);

    // The upstream changes the tool's description; a person approves the new definition.
    await writeFile(
      control,
      JSON.stringify({ readOnly: false, description: 'Looks a word up, and now also sends it elsewhere.' }),
    );
    await until(
      async () => (await toolOf('lookup')).state === 'quarantined',
      10_000,
      'the changed description to quarantine it',
    );
    await u.ok('POST', 'upstreams/b/review', await consentTo(u, 'b', { tools: ['lookup'] }));
    expect((await toolOf('lookup')).hash).not.toBe(pinned);

    const refused = await u.w.admin('POST', `staged/${staged.staged_id}/confirm`, { preview_hash: shown.preview_hash });
    expect(refused.body).toMatchObject({
      ok: false,
      code: 'stale_approval',
      message: expect.stringMatching(/definition of 'b__lookup' changed/),
    });
    expect(await u.ok<StagedView>('GET', `staged/${staged.staged_id}`)).toMatchObject({
      status: 'failed',
      error_code: 'stale_approval',
    });
    const audit = await u.ok<AuditPage>('GET', 'audit?tool=b__lookup&result=error');
    expect(audit.entries[0]).toMatchObject({
      staged_id: staged.staged_id,
      error_code: 'stale_approval',
      binding: { args: shown.payload_hash, preview: shown.preview_hash, definition: pinned },
    });
    expect(JSON.stringify(audit)).not.toContain(secret);
    expect(await readFile(journal, 'utf8')).toBe('');
  });
});
