import { describe, expect, it } from 'vitest';
import type { WriteTool } from '../../../main/core/calls/tool.ts';
import { GatehouseError } from '../../../main/core/errors.ts';
import { PRINCIPALS, consoleSession } from '../../../main/contract/principal.ts';
import { WRITER, coreWorld, ctxFor, type CoreWorld } from '../../helpers/core.ts';

// Settling a write whose outcome is unknown, on the pure core (in-memory stores): what is recorded, in which order, and what is refused.

const person = { kind: 'person' as const, principal: PRINCIPALS.cliDirect };
const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof GatehouseError ? e.code : String(e)),
  );
const trail = (w: CoreWorld, id: string) =>
  w.audit.entries.filter((e) => e.staged_id === id).map((e) => [e.result, e.error_code]);

/** A write whose confirm "died" before its plugin answered, recovered by a plugin that cannot tell: failed, apply_interrupted. */
async function interrupted(w: CoreWorld, text: string): Promise<string> {
  const { staged_id } = await w.staging.stage(w.registry.get('notes_add') as WriteTool, { text }, ctxFor(WRITER));
  await w.audit.sync();
  w.stopAt = 'before-apply';
  const reached = w.applying();
  void w.staging.confirm(staged_id, person);
  await reached;
  await (await w.restart()).recover();
  return staged_id;
}

describe('settling an unknown outcome', () => {
  it("records the person's word once, audited with them, kept across a restart; nothing is applied", async () => {
    const w = await coreWorld({ canTell: false });
    const id = await interrupted(w, 'maybe');
    const by = { kind: 'person' as const, principal: consoleSession('ses_0123456789ab') };
    const s = await w.staging.settle(id, 'not_applied', by);
    expect(s).toMatchObject({
      status: 'failed',
      error_code: 'not_applied',
      settlement: { outcome: 'not_applied', was: 'apply_interrupted', by: by.principal },
    });
    expect(trail(w, id)).toEqual([
      ['staged', null],
      ['error', 'apply_interrupted'],
      ['error', 'not_applied'],
    ]);
    expect(w.audit.entries.at(-1)).toMatchObject({ principal: by.principal, user_id: WRITER.id });
    expect(await codeOf(w.staging.settle(id, 'applied', person))).toBe('staged_already_decided');
    expect(await codeOf(w.staging.confirm(id, person))).toBe('staged_already_decided');
    expect((await w.restart()).get(id)).toMatchObject({ status: 'failed', settlement: { outcome: 'not_applied' } });
    expect(w.notes.notes).toEqual([]);
  });

  it('killed between the audit entry and the record: the write still waits, and settling again completes it', async () => {
    const w = await coreWorld({ canTell: false });
    const id = await interrupted(w, 'twice');
    w.store.failNextPut = new Error('disk gone');
    expect(await codeOf(w.staging.settle(id, 'applied', person))).toBe('Error: disk gone');
    expect(trail(w, id).at(-1)).toEqual(['confirmed', null]);
    const next = await w.restart();
    expect(next.get(id)).toMatchObject({ status: 'failed', error_code: 'apply_interrupted' });
    expect(next.get(id).settlement).toBeUndefined();
    expect(await next.settle(id, 'applied', person)).toMatchObject({
      status: 'confirmed',
      error_code: null,
      settlement: { outcome: 'applied' },
    });
    expect(trail(w, id).filter(([r]) => r === 'confirmed')).toHaveLength(2);
  });

  it('two people at once: one answer wins, the other is told it was settled', async () => {
    const w = await coreWorld({ canTell: false });
    const id = await interrupted(w, 'race');
    const codes = await Promise.all([
      codeOf(w.staging.settle(id, 'applied', person)),
      codeOf(w.staging.settle(id, 'not_applied', person)),
    ]);
    expect(codes).toEqual(['ok', 'staged_already_decided']);
    expect(w.staging.get(id)).toMatchObject({ status: 'confirmed', settlement: { outcome: 'applied' } });
  });

  it('refuses what is not an unknown outcome, and an unknown id', async () => {
    const w = await coreWorld();
    const { staged_id } = await w.staging.stage(
      w.registry.get('notes_add') as WriteTool,
      { text: 'x' },
      ctxFor(WRITER),
    );
    expect(await codeOf(w.staging.settle(staged_id, 'applied', person))).toBe('conflict');
    await w.staging.confirm(staged_id, person);
    expect(await codeOf(w.staging.settle(staged_id, 'not_applied', person))).toBe('conflict');
    expect(await codeOf(w.staging.settle('__proto__', 'applied', person))).toBe('staged_not_found');
    expect(w.notes.notes).toEqual(['x']);
  });
});
