import { describe, expect, it } from 'vitest';
import type { WriteTool } from '../../../main/core/calls/tool.ts';
import { GatehouseError } from '../../../main/core/errors.ts';
import { PRINCIPALS } from '../../../main/contract/principal.ts';
import { ADMIN, WRITER, coreWorld, ctxFor, type CoreWorld } from '../../helpers/core.ts';

// The staging state machine on in-memory adapters: no files, no sockets.

const person = { kind: 'person' as const, principal: PRINCIPALS.cliDirect };
const tool = (w: CoreWorld) => w.registry.get('notes_add') as WriteTool;
// The audit writer flushes within a tick; a stage's entry is on disk long before anyone decides.
const stage = async (w: CoreWorld, text: string, ctx = ctxFor(WRITER)) => {
  const r = await w.staging.stage(tool(w), { text }, ctx);
  await w.audit.sync();
  return r;
};
const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof GatehouseError ? e.code : String(e)),
  );
/** A confirm whose process "dies" at `at`: the plugin never returns, and the test restarts the world. */
async function killDuringConfirm(w: CoreWorld, id: string, at: 'before-apply' | 'after-apply') {
  w.stopAt = at;
  const reached = w.applying();
  void w.staging.confirm(id, person);
  await reached;
}

describe('staging (pure core, in-memory store)', () => {
  it('changes nothing until confirmed; two concurrent confirms and a late one apply once and return the first result', async () => {
    const w = await coreWorld();
    const s = await stage(w, 'hello');
    expect(w.notes.notes).toEqual([]);
    expect(w.staging.get(s.staged_id).status).toBe('pending');
    const [a, b] = await Promise.all([w.staging.confirm(s.staged_id, person), w.staging.confirm(s.staged_id, person)]);
    const c = await w.staging.confirm(s.staged_id, person);
    expect(w.notes.notes).toEqual(['hello']);
    expect(a.result).toEqual({ count: 1, text: 'hello' });
    expect([b.result, c.result]).toEqual([a.result, a.result]);
    expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
    expect(w.store.records.get(s.staged_id)?.status).toBe('confirmed');
  });

  it('discard and expiry each end with one audit entry, and a later confirm is refused with the right code', async () => {
    const w = await coreWorld({ lifetimeMs: 60_000 });
    const d = await stage(w, 'dropped');
    await w.staging.discard(d.staged_id, person);
    expect(await codeOf(w.staging.confirm(d.staged_id, person))).toBe('staged_already_decided');
    const e = await stage(w, 'late');
    w.clock.t += 60_001;
    expect(w.staging.get(e.staged_id).status).toBe('expired');
    expect(await codeOf(w.staging.confirm(e.staged_id, person))).toBe('staged_expired');
    expect(w.notes.notes).toEqual([]);
    expect(w.audit.results(d.staged_id)).toEqual(['staged', 'discarded']);
    expect(w.audit.results(e.staged_id)).toEqual(['staged', 'expired']);
    const f = await stage(w, 'swept');
    w.clock.t += 60_001;
    expect(await w.staging.sweep()).toBe(1);
    expect(w.staging.get(f.staged_id).status).toBe('expired');
  });

  it('a test lifetime can only shorten the 15 minutes', async () => {
    const w = await coreWorld({ lifetimeMs: 24 * 3600_000 });
    const s = await stage(w, 'x');
    expect(Date.parse(s.expires_at) - w.clock.t).toBe(15 * 60_000);
  });

  describe('bounds on what a client can make the service hold', () => {
    it('a write whose payload and preview are over the size limit is refused with staged_too_large and nothing is stored', async () => {
      const w = await coreWorld({ limits: { writeBytes: 2048 } });
      const err = await stage(w, 'x'.repeat(3000)).catch((e: GatehouseError) => e);
      expect(err).toBeInstanceOf(GatehouseError);
      expect((err as GatehouseError).code).toBe('staged_too_large');
      expect((err as GatehouseError).message).toMatch(/limit is 2 KiB/);
      expect(w.store.records.size).toBe(0);
      expect(w.staging.pendingCount()).toBe(0);
    });

    it('pending writes per token and in total are capped with staged_limit_reached; a decision frees room', async () => {
      const w = await coreWorld({ limits: { pendingPerToken: 3, pendingTotal: 5 } });
      const first = await stage(w, 'a1', ctxFor(WRITER, 'tok_a'));
      for (const t of ['a2', 'a3']) await stage(w, t, ctxFor(WRITER, 'tok_a'));
      const perToken = await stage(w, 'a4', ctxFor(WRITER, 'tok_a')).catch((e: GatehouseError) => e);
      expect([(perToken as GatehouseError).code, (perToken as GatehouseError).details.scope]).toEqual([
        'staged_limit_reached',
        'token',
      ]);
      await stage(w, 'b1', ctxFor(WRITER, 'tok_b'));
      await stage(w, 'b2', ctxFor(WRITER, 'tok_b'));
      const total = await stage(w, 'b3', ctxFor(WRITER, 'tok_b')).catch((e: GatehouseError) => e);
      expect([(total as GatehouseError).code, (total as GatehouseError).details.scope]).toEqual([
        'staged_limit_reached',
        'total',
      ]);
      await w.staging.discard(first.staged_id, person);
      await stage(w, 'a4', ctxFor(WRITER, 'tok_a'));
      expect(w.staging.pendingCount()).toBe(5);
    });

    it('concurrent stages cannot overshoot the limit between the check and the write', async () => {
      const w = await coreWorld({ limits: { pendingPerToken: 4 } });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => codeOf(stage(w, `n${i}`))));
      expect(results.filter((r) => r === 'ok')).toHaveLength(4);
      expect(results.filter((r) => r === 'staged_limit_reached')).toHaveLength(6);
      expect(w.store.records.size).toBe(4);
    });

    it('pending bytes in total are capped too', async () => {
      const w = await coreWorld({ limits: { pendingBytes: 6000 } });
      await stage(w, 'x'.repeat(1500));
      await stage(w, 'y'.repeat(1500));
      const err = await stage(w, 'z'.repeat(1500)).catch((e: GatehouseError) => e);
      expect([(err as GatehouseError).code, (err as GatehouseError).details.scope]).toEqual([
        'staged_limit_reached',
        'bytes',
      ]);
    });

    it('the history keeps the newest decisions within its entry limit and deletes the rest from the store', async () => {
      const w = await coreWorld({ limits: { historyEntries: 3 } });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const s = await stage(w, `h${i}`);
        ids.push(s.staged_id);
        w.clock.t += 1000;
        await w.staging.discard(s.staged_id, person);
      }
      // the history's deletes from the store run after the decision is answered: wait for them
      await expect.poll(() => [...w.store.records.keys()].sort()).toEqual(ids.slice(2).sort());
      expect(w.staging.list().map((s) => s.id)).toEqual(ids.slice(2).reverse());
      // and a restart sees the same
      expect((await w.restart()).list().map((s) => s.id)).toEqual(ids.slice(2).reverse());
    });
  });

  describe('crash safety: intent, idempotent apply, recovery at start', () => {
    it('killed after the intent, before the plugin applied: the write is pending again and confirms once', async () => {
      const w = await coreWorld();
      const s = await stage(w, 'one');
      await killDuringConfirm(w, s.staged_id, 'before-apply');
      expect(w.store.records.get(s.staged_id)?.status).toBe('applying');
      const next = await w.restart();
      expect(await next.recover()).toEqual({ completed: 0, pending_again: 1, expired: 0, interrupted: 0 });
      expect(next.get(s.staged_id).status).toBe('pending');
      await next.confirm(s.staged_id, person);
      expect(w.notes.notes).toEqual(['one']);
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
    });

    it('killed after the plugin applied, before anything was recorded: recovery confirms it with its result and exactly one confirmed entry', async () => {
      const w = await coreWorld();
      const s = await stage(w, 'two');
      await killDuringConfirm(w, s.staged_id, 'after-apply');
      const next = await w.restart();
      expect((await next.recover()).completed).toBe(1);
      const done = next.get(s.staged_id);
      expect([done.status, done.decided_by, done.result]).toEqual([
        'confirmed',
        PRINCIPALS.cliDirect,
        { count: 1, text: 'two' },
      ]);
      expect(await next.confirm(s.staged_id, person)).toMatchObject({
        status: 'confirmed',
        result: { count: 1, text: 'two' },
      });
      expect(w.notes.notes).toEqual(['two']);
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
      // a second recovery (killed again during the first) changes nothing
      expect(await (await w.restart()).recover()).toEqual({
        completed: 0,
        pending_again: 0,
        expired: 0,
        interrupted: 0,
      });
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
    });

    it('killed after the confirmed entry was durable, before the record said so: recovery finds the entry and writes no second one', async () => {
      const w = await coreWorld();
      const s = await stage(w, 'three');
      const real = tool(w).apply.bind(tool(w));
      tool(w).apply = async (...args) => {
        const out = await real(...args);
        // The record's last write fails (its result kept with the intent goes first): what a kill right there leaves.
        w.store.passPuts = 1;
        w.store.failNextPut = new Error('disk gone');
        return out;
      };
      expect(await codeOf(w.staging.confirm(s.staged_id, person))).toBe('Error: disk gone');
      expect(w.store.records.get(s.staged_id)?.status).toBe('applying');
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
      const next = await w.restart();
      expect((await next.recover()).completed).toBe(1);
      expect(next.get(s.staged_id).status).toBe('confirmed');
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
      expect(w.notes.notes).toEqual(['three']);
    });

    it('a plugin that cannot tell (an upstream), killed after its confirmed entry was durable: recovery confirms it with the result kept, once', async () => {
      const w = await coreWorld({ canTell: false });
      const s = await stage(w, 'nine');
      const real = tool(w).apply.bind(tool(w));
      tool(w).apply = async (...args) => {
        const out = await real(...args);
        w.store.passPuts = 1;
        w.store.failNextPut = new Error('disk gone');
        return out;
      };
      expect(await codeOf(w.staging.confirm(s.staged_id, person))).toBe('Error: disk gone');
      expect(w.store.records.get(s.staged_id)).toMatchObject({
        status: 'applying',
        result: { count: 1, text: 'nine' },
      });
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
      const next = await w.restart();
      expect(await next.recover()).toEqual({ completed: 1, pending_again: 0, expired: 0, interrupted: 0 });
      expect(next.get(s.staged_id)).toMatchObject({
        status: 'confirmed',
        error_code: null,
        decided_by: PRINCIPALS.cliDirect,
        result: { count: 1, text: 'nine' },
      });
      expect(await next.confirm(s.staged_id, person)).toMatchObject({ result: { count: 1, text: 'nine' } });
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
      expect(await (await w.restart()).recover()).toEqual({
        completed: 0,
        pending_again: 0,
        expired: 0,
        interrupted: 0,
      });
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
      expect(w.notes.notes).toEqual(['nine']);
    });

    it('a plugin that cannot tell, killed after its result was kept and before its entry was durable: confirmed with that result, one entry', async () => {
      const w = await coreWorld({ canTell: false });
      const s = await stage(w, 'ten');
      w.audit.failNextSync = new Error('EIO');
      expect(await codeOf(w.staging.confirm(s.staged_id, person))).toBe('service_unavailable');
      expect(w.store.records.get(s.staged_id)).toMatchObject({ status: 'applying', result: { count: 1, text: 'ten' } });
      const next = await w.restart();
      expect((await next.recover()).completed).toBe(1);
      expect(next.get(s.staged_id)).toMatchObject({ status: 'confirmed', result: { count: 1, text: 'ten' } });
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
      expect(w.notes.notes).toEqual(['ten']);
    });

    it('a plugin that cannot tell, with only its confirmed entry left (a record from before results were kept): confirmed without a result, never a second entry', async () => {
      const w = await coreWorld({ canTell: false });
      const s = await stage(w, 'eleven');
      const real = tool(w).apply.bind(tool(w));
      tool(w).apply = async (...args) => {
        const out = await real(...args);
        w.store.passPuts = 1;
        w.store.failNextPut = new Error('disk gone');
        return out;
      };
      await codeOf(w.staging.confirm(s.staged_id, person));
      const kept = w.store.records.get(s.staged_id)!;
      w.store.records.set(s.staged_id, { ...kept, result: undefined });
      const next = await w.restart();
      expect((await next.recover()).completed).toBe(1);
      expect(next.get(s.staged_id)).toMatchObject({ status: 'confirmed', error_code: null });
      expect(next.get(s.staged_id).result).toBeUndefined();
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
    });

    it('an intent whose write expired meanwhile and was not applied becomes expired, never applied', async () => {
      const w = await coreWorld({ lifetimeMs: 60_000 });
      const s = await stage(w, 'four');
      await killDuringConfirm(w, s.staged_id, 'before-apply');
      w.clock.t += 120_000;
      const next = await w.restart();
      expect((await next.recover()).expired).toBe(1);
      expect(await codeOf(next.confirm(s.staged_id, person))).toBe('staged_expired');
      expect(w.notes.notes).toEqual([]);
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'expired']);
    });

    it('a plugin that cannot tell: the write is marked failed (apply_interrupted) and never applied again', async () => {
      const w = await coreWorld({ canTell: false });
      const s = await stage(w, 'five');
      await killDuringConfirm(w, s.staged_id, 'before-apply');
      const next = await w.restart();
      expect((await next.recover()).interrupted).toBe(1);
      const item = next.get(s.staged_id);
      expect([item.status, item.error_code]).toEqual(['failed', 'apply_interrupted']);
      expect(await codeOf(next.confirm(s.staged_id, person))).toBe('staged_already_decided');
      expect(w.notes.notes).toEqual([]);
      expect(w.audit.entries.filter((e) => e.staged_id === s.staged_id).map((e) => [e.result, e.error_code])).toEqual([
        ['staged', null],
        ['error', 'apply_interrupted'],
      ]);
    });

    it('a confirm is not acknowledged before its audit entry is durable; confirming again completes it without a second entry', async () => {
      const w = await coreWorld();
      const s = await stage(w, 'six');
      w.audit.failNextSync = new Error('EIO');
      expect(await codeOf(w.staging.confirm(s.staged_id, person))).toBe('service_unavailable');
      expect(w.notes.notes).toEqual(['six']);
      const done = await w.staging.confirm(s.staged_id, person);
      expect(done.status).toBe('confirmed');
      expect(w.notes.notes).toEqual(['six']);
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'confirmed']);
    });

    it('an apply that throws changed nothing: failed, with one error entry', async () => {
      const w = await coreWorld();
      const s = await stage(w, 'seven');
      tool(w).apply = async () => {
        throw new GatehouseError('conflict', 'nope');
      };
      expect(await codeOf(w.staging.confirm(s.staged_id, person))).toBe('conflict');
      expect(w.staging.get(s.staged_id)).toMatchObject({ status: 'failed', error_code: 'conflict' });
      expect(w.audit.results(s.staged_id)).toEqual(['staged', 'error']);
    });
  });

  it("an agent decides only its own user's writes, in agent mode", async () => {
    const w = await coreWorld();
    await w.settings.update({ approval_mode: 'agent' });
    const s = await stage(w, 'mine', ctxFor(WRITER));
    expect(await codeOf(w.staging.confirm(s.staged_id, { kind: 'agent', ctx: ctxFor(ADMIN, 'tok_other') }))).toBe(
      'staged_not_found',
    );
    const done = await w.staging.confirm(s.staged_id, { kind: 'agent', ctx: ctxFor(WRITER) });
    expect(done.decided_by).toEqual({
      kind: 'token',
      surface: 'mcp',
      token_id: 'tok_a',
      token_preview: 'gth_…test',
      user_id: WRITER.id,
      login: 'writer',
    });
  });

  it('adopts records of an earlier version once, even when run again after a crash', async () => {
    const w = await coreWorld();
    const s = await stage(w, 'old');
    const record = w.staging.get(s.staged_id);
    const fresh = await w.restart();
    expect(await fresh.adopt([record, { ...record, id: 'stg_legacy1' }, { ...record, id: 'stg_legacy1' }])).toBe(1);
    expect(await fresh.adopt([{ ...record, id: 'stg_legacy1' }])).toBe(0);
    expect(
      fresh
        .list()
        .map((x) => x.id)
        .sort(),
    ).toEqual([s.staged_id, 'stg_legacy1'].sort());
  });
});
