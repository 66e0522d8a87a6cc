import { describe, expect, it } from 'vitest';
import type { CallQuery } from '../../main/core/policy/policy.ts';
import { createCedarEngine } from '../../main/policy/cedar-engine.ts';
import type { DecisionMemoStore } from '../../main/policy/decision-memo.ts';
import { toolQuery } from './policy-query.ts';

/**
 * Decisions kept across processes (main/policy/decision-memo.ts): a second engine on the same memo answers what
 * the first decided without loading Cedar; anything else (another policy, a request not seen, a memo that does
 * not fit) loads the engine and gets the engine's own answer.
 */
function memoryStore(): DecisionMemoStore & { doc: unknown; writes: number } {
  return {
    doc: null,
    writes: 0,
    read() {
      return structuredClone(this.doc);
    },
    async write(doc) {
      this.doc = structuredClone(doc);
      this.writes++;
    },
  };
}

const later = (q: CallQuery, minute: number): CallQuery => ({
  ...q,
  context: { ...q.context, time: { ...q.context.time, minute } },
});

describe('the policy decision memo', () => {
  it('answers in another process what one decided before, without loading the engine, also where only what the policy never reads differs', async () => {
    const store = memoryStore();
    const first = createCedarEngine({ activeText: () => null, memo: store });
    const allowed = await first.decide(toolQuery());
    expect(allowed.decision).toBe('allow');
    expect(first.loaded()).toBe(true);
    await first.settled();
    expect((store.doc as { decisions: unknown[] }).decisions).toHaveLength(1);

    const second = createCedarEngine({ activeText: () => null, memo: store });
    // the default policy reads no time: a minute later is the same question
    expect(await second.decide(later(toolQuery(), 42))).toEqual(allowed);
    expect(await second.mayPermit('run_without_approval')).toBe(false);
    expect(second.loaded()).toBe(false);

    // a request never decided loads the engine, and what it decides is kept too
    const editorWrite = toolQuery('pages_create');
    editorWrite.entities[1]!.attrs.class = 'write';
    editorWrite.entities[1]!.attrs.capability = 'edit_pages';
    const denied = await second.decide(editorWrite);
    expect(second.loaded()).toBe(true);
    expect(denied.decision).toBe('deny');
    await second.settled();
    const third = createCedarEngine({ activeText: () => null, memo: store });
    expect(await third.decide(editorWrite)).toEqual(denied);
    expect(third.loaded()).toBe(false);
  });

  it("is one policy's: after the policy changed, the engine decides, and the memo becomes the new policy's", async () => {
    const store = memoryStore();
    const made = createCedarEngine({ activeText: () => null, memo: store });
    await made.decide(toolQuery());
    await made.settled();
    const forbid =
      '@id("stop") forbid (principal, action, resource == Tool::"pages_list");\npermit (principal, action, resource);';
    const changed = createCedarEngine({ activeText: () => forbid, memo: store });
    expect(await changed.decide(toolQuery())).toMatchObject({ decision: 'deny', policies: ['stop'] });
    expect(changed.loaded()).toBe(true);
    await changed.settled();
    const after = createCedarEngine({ activeText: () => forbid, memo: store });
    expect(await after.decide(toolQuery())).toMatchObject({ decision: 'deny', policies: ['stop'] });
    expect(after.loaded()).toBe(false);
    // and the default's decisions are gone with it
    const back = createCedarEngine({ activeText: () => null, memo: store });
    expect((await back.decide(toolQuery())).decision).toBe('allow');
    expect(back.loaded()).toBe(true);
  });

  it('is ignored when it does not fit: another engine or schema, a tampered decision, a store that throws; never trusted in part', async () => {
    const store = memoryStore();
    const made = createCedarEngine({ activeText: () => null, memo: store });
    await made.decide(toolQuery());
    await made.settled();
    const good = store.doc as { engine: string; decisions: unknown[][] };
    const variants: unknown[] = [
      { ...good, engine: 'another-engine|another-schema' },
      { ...good, decisions: good.decisions.map(([k]) => [k, 'perhaps', [], []]) },
      { ...good, decisions: 'all allowed' },
      'not an object',
    ];
    for (const doc of variants) {
      const e = createCedarEngine({ activeText: () => null, memo: { read: () => doc, write: async () => undefined } });
      expect((await e.decide(toolQuery())).decision).toBe('allow');
      expect(e.loaded(), JSON.stringify(doc).slice(0, 80)).toBe(true);
    }
    const throwing = createCedarEngine({
      activeText: () => null,
      memo: {
        read: () => {
          throw new Error('EACCES');
        },
        write: async () => {
          throw new Error('ENOSPC');
        },
      },
    });
    expect((await throwing.decide(toolQuery())).decision).toBe('allow');
    await throwing.settled();
  });

  it('a stored policy that does not validate is refused, memo or not: it never gets one', async () => {
    const store = memoryStore();
    const broken = 'permit (principal, action, resource) when { principal.gone };';
    const e = createCedarEngine({ activeText: () => broken, memo: store });
    await expect(e.decide(toolQuery())).rejects.toMatchObject({ code: 'policy_unavailable' });
    await e.settled();
    expect(store.doc).toBeNull();
  });
});
