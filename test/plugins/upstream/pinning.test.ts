import { describe, expect, it } from 'vitest';
import { UpstreamAddInput, UpstreamId } from '../../../main/contract/upstreams.ts';
import {
  approve,
  classOf,
  definitionHash,
  isOffered,
  reconcile,
  samePinList,
  samePins,
  stateOf,
  toolView,
} from '../../../main/plugins/upstream/pinning.ts';
import { applyPromptReview, applyReview } from '../../../main/plugins/upstream/review.ts';
import { promptDefinitionOf, promptHash, reconcilePrompts } from '../../../main/plugins/upstream/prompt-pins.ts';
import { maskSecrets as masked, UNCHECKED } from '../../../main/lib/secret-scan.ts';
import { argsShape } from '../../../main/core/calls/args-shape.ts';
import type { PinnedPrompt, PinnedTool, ToolDefinition } from '../../../main/plugins/upstream/upstream-data.ts';

const def = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name,
  description: `${name} does things`,
  inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
  ...extra,
});
const added = (defs: ToolDefinition[]): PinnedTool[] => reconcile([], defs).pins.map(approve);
const review = (pins: PinnedTool[], r: Partial<Parameters<typeof applyReview>[2]>) =>
  applyReview('up', pins, {
    id: 'up',
    approve: [],
    approve_all: false,
    hide: [],
    read: [],
    write: [],
    approve_prompts: [],
    hide_prompts: [],
    ...r,
  });

describe('pinning', () => {
  it("keeps a tool's task support up to date without a review: how it is called is not what it does", () => {
    // a pin approved before `execution` was kept, the same tool listed now with it
    const pins = added([def('research')]);
    const required = def('research', { execution: { taskSupport: 'required' } });
    expect(definitionHash(required)).toBe(definitionHash(def('research')));
    const now = reconcile(pins, [required]);
    expect(now.quarantined).toEqual([]);
    expect(now.pins[0]!.approved!.definition.execution).toEqual({ taskSupport: 'required' });
    expect(isOffered(now.pins[0]!)).toBe(true);
    // and when the upstream stops saying it, the pin stops too
    expect(reconcile(now.pins, [def('research')]).pins[0]!.approved!.definition.execution).toBeUndefined();
  });

  it('a re-listing that changed nothing gives pins samePinList and samePins call alike; any change in a pin is seen', () => {
    const withTask = def('t', { execution: { taskSupport: 'optional' } });
    const pins = added([def('a'), withTask]);
    const again = reconcile(pins, [def('a'), withTask]).pins;
    expect(samePinList(again, pins)).toBe(true);
    expect(samePins(again, pins)).toBe(true);
    // an approved definition is kept as the same object when nothing unhashed changed
    expect(again[0]!.approved).toBe(pins[0]!.approved);
    // key order alone is no change; an unhashed field (task support), a hidden flag, a new pending hash are
    const reordered = pins.map((p) => Object.fromEntries(Object.entries(p).reverse()) as PinnedTool);
    expect(samePinList(reordered, pins)).toBe(true);
    for (const changed of [
      reconcile(pins, [def('a'), def('t', { execution: { taskSupport: 'required' } })]).pins,
      [pins[0]!, { ...pins[1]!, hidden: true }],
      reconcile(pins, [def('a', { description: 'other' }), withTask]).pins,
      reconcile(pins, [def('a')]).pins,
    ]) {
      expect(samePinList(changed, pins)).toBe(false);
      expect(samePins(changed, pins)).toBe(false);
    }
  });

  it('hashes the definition, not the key order', () => {
    const a = def('x', {
      inputSchema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } },
    });
    const b = { ...a, inputSchema: { properties: { b: { type: 'number' }, a: { type: 'string' } }, type: 'object' } };
    expect(definitionHash(a)).toBe(definitionHash(b as ToolDefinition));
    expect(definitionHash(a)).not.toBe(definitionHash({ ...a, description: 'other' }));
    expect(definitionHash(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('keeps an unchanged tool approved, quarantines a changed or new one, marks a missing one removed', () => {
    const pins = added([def('keep'), def('change'), def('gone')]);
    const r = reconcile(pins, [def('keep'), def('change', { description: 'now does other things' }), def('fresh')]);
    const by = Object.fromEntries(r.pins.map((p) => [p.name, p]));
    expect(stateOf(by.keep!)).toBe('approved');
    expect(isOffered(by.keep!)).toBe(true);
    expect([stateOf(by.change!), by.change!.pending!.reason, isOffered(by.change!)]).toEqual([
      'quarantined',
      'changed',
      false,
    ]);
    expect([stateOf(by.fresh!), by.fresh!.pending!.reason, isOffered(by.fresh!)]).toEqual([
      'quarantined',
      'new',
      false,
    ]);
    expect([by.gone!.removed, isOffered(by.gone!)]).toEqual([true, false]);
    expect(r).toMatchObject({ quarantined: ['change', 'fresh'], removed: ['gone'] });
    expect(toolView('up', by.change!).pending!.changes).toEqual([
      { field: 'description', before: 'change does things', after: 'now does other things' },
    ]);
    // the same listing again reports nothing new
    expect(
      reconcile(r.pins, [def('keep'), def('change', { description: 'now does other things' }), def('fresh')]),
    ).toMatchObject({ quarantined: [], removed: [] });
  });

  it('classes a tool read only by a person or by the hint a person approved; a flipped hint goes back to review', () => {
    const [ro, rw] = added([def('ro', { annotations: { readOnlyHint: true } }), def('rw')]);
    expect([classOf(ro!), classOf(rw!)]).toEqual(['read', 'write']);
    const flipped = reconcile([ro!], [def('ro', { annotations: { readOnlyHint: false } })]).pins[0]!;
    expect(flipped.pending!.reason).toBe('hint_flipped');
    expect(classOf(flipped)).toBe('read');
    expect(classOf(approve(flipped))).toBe('write');
    const marked = review([approve(flipped)], { read: ['up__ro'] })[0]!;
    expect(classOf(marked)).toBe('read');
  });

  it('review approves, hides and marks; an unknown or contradictory name changes nothing', () => {
    const pins = reconcile(added([def('a'), def('b')]), [def('a', { title: 'A!' }), def('b'), def('c')]).pins;
    const out = review(pins, { approve_all: true, hide: ['b'], write: ['c'] });
    expect(out.map((p) => [p.name, stateOf(p), classOf(p)])).toEqual([
      ['a', 'approved', 'write'],
      ['b', 'hidden', 'write'],
      ['c', 'approved', 'write'],
    ]);
    expect(() => review(pins, { approve: ['nope'] })).toThrow(/no tool 'nope'/);
    expect(() => review(pins, { read: ['a'], write: ['up__a'] })).toThrow(/either read or write/);
    expect(() => review(pins, { approve: ['a'], hide: ['a'] })).toThrow(/approved and hidden/);
  });
});

describe('input rules', () => {
  it('ids cannot hold an underscore, so namespaced names never collide', () => {
    for (const ok of ['a', 'files', 'git-work', 'x1']) expect(UpstreamId.safeParse(ok).success, ok).toBe(true);
    for (const bad of ['', 'a_b', 'a__b', '-a', 'a-', 'A', '__proto__', 'x'.repeat(33), 'a b'])
      expect(UpstreamId.safeParse(bad).success, bad).toBe(false);
  });

  it('refuses credentials in the URL, line breaks in values, and odd env names', () => {
    const http = (url: string, headers: unknown[] = []) =>
      UpstreamAddInput.safeParse({ id: 'w', transport: { kind: 'http', url, headers } }).success;
    expect(http('https://example.com/mcp')).toBe(true);
    expect(http('https://user:pw@example.com/mcp')).toBe(false);
    expect(http('file:///etc/passwd')).toBe(false);
    expect(http('https://example.com/mcp', [{ name: 'X-A', value: 'a\r\nInjected: 1' }])).toBe(false);
    const env = (name: string) =>
      UpstreamAddInput.safeParse({ id: 's', transport: { kind: 'stdio', command: 'x', env: [{ name, value: 'v' }] } })
        .success;
    expect(env('API_KEY')).toBe(true);
    expect(env('1BAD')).toBe(false);
    expect(env('A=B')).toBe(false);
  });

  it('audits the shape of arguments, never a value, bounded', () => {
    expect(argsShape({ path: '/secret/file', opts: { force: true, n: 3 }, lines: [1, 2], tags: [], none: null })).toBe(
      '{path:string,opts:{force:boolean,n:number},lines:[number],tags:[],none:null}',
    );
    expect(argsShape({ a: { b: { c: { d: { e: 1 } } } } })).toBe('{a:{b:{c:{d:{…}}}}}');
    expect(argsShape(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])))).toMatch(/k29:number,…}$/);
  });

  it('masks secret-looking arguments in a preview, at any depth, bounded', () => {
    expect(
      masked({ path: '/tmp/a', api_key: 'k-1', nested: [{ password: 'p', note: 'Bearer sk-4f9a8b7c6d5e' }] }),
    ).toEqual({
      path: '/tmp/a',
      api_key: '[redacted]',
      nested: [{ password: '[redacted]', note: 'Bearer [redacted]' }],
    });
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(JSON.stringify(masked(deep))).toContain(UNCHECKED);
  });
});

describe('prompt pins', () => {
  const prompt = (name: string, description = `${name} prompt`) =>
    promptDefinitionOf(name, {
      name,
      description,
      arguments: [{ name: 'city', required: true }],
      icons: [{ src: 'x' }],
      _meta: { x: 1 },
    });
  const reviewPrompts = (pins: PinnedPrompt[] | null, r: Partial<Parameters<typeof applyPromptReview>[2]>) =>
    applyPromptReview('up', pins, {
      id: 'up',
      approve: [],
      approve_all: false,
      hide: [],
      read: [],
      write: [],
      approve_prompts: [],
      hide_prompts: [],
      ...r,
    });

  it('hashes name, title, description and arguments only, in any key order', () => {
    const a = prompt('p');
    expect(a).toEqual({ name: 'p', description: 'p prompt', arguments: [{ name: 'city', required: true }] });
    expect(promptHash(a)).toBe(
      promptHash({ arguments: [{ required: true, name: 'city' }], description: 'p prompt', name: 'p' }),
    );
    expect(promptHash(a)).not.toBe(promptHash({ ...a, arguments: [{ name: 'city' }] }));
    expect(promptHash(a)).not.toBe(definitionHash({ name: 'p', description: 'p prompt', inputSchema: {} }));
  });

  it('no pins yet (a store from before): the first listing is pinned approved, once; then new and changed ones wait', () => {
    const first = reconcilePrompts(null, [prompt('a'), prompt('b')]);
    expect(first).toMatchObject({ first: true, quarantined: [], removed: [] });
    expect(first.pins.every((p) => isOffered(p))).toBe(true);
    const next = reconcilePrompts(first.pins, [prompt('a', 'now steers the model'), prompt('c')]);
    expect(next).toMatchObject({ first: false, quarantined: ['a', 'c'], removed: ['b'] });
    expect(next.pins.map((p) => [p.name, stateOf(p), p.pending?.reason ?? null, p.removed])).toEqual([
      ['a', 'quarantined', 'changed', false],
      ['c', 'quarantined', 'new', false],
      ['b', 'approved', null, true],
    ]);
    expect(reconcilePrompts([], [prompt('a')]).pins.map((p) => stateOf(p))).toEqual(['quarantined']);
  });

  it('reviews prompts apart from tools; names every JavaScript object has are plain names', () => {
    const pins = reconcilePrompts([], [prompt('__proto__'), prompt('constructor'), prompt('hasOwnProperty')]).pins;
    const approved = reviewPrompts(pins, {
      approve_prompts: ['up____proto__', 'constructor'],
      hide_prompts: ['hasOwnProperty'],
    })!;
    expect(approved.map((p) => [p.name, stateOf(p)])).toEqual([
      ['__proto__', 'approved'],
      ['constructor', 'approved'],
      ['hasOwnProperty', 'hidden'],
    ]);
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(() => reviewPrompts(pins, { approve_prompts: ['toString'] })).toThrow(/has no prompt 'toString'/);
    expect(() =>
      reviewPrompts(pins, { prompt_consent: [{ prompt: 'constructor', hash: `sha256:${'1'.repeat(64)}` }] }),
    ).toThrow(/changed \(or was approved\) since it was shown/);
    expect(reviewPrompts(pins, { approve_all: true })!.every((p) => stateOf(p) === 'approved')).toBe(true);
    // Nothing asked of the prompts of an upstream that has no pins yet leaves them unpinned (its first listing is still to come).
    expect(reviewPrompts(null, { approve_all: true })).toBeNull();
  });
});
