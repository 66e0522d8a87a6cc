/**
 * Approvals responsiveness: render the screen with 50 and 500 pending writes
 * (jsdom, the real React tree, an in-memory Api), then time a keyboard move,
 * a keyboard approve and a live insert. Side by side, with the 500/50 ratio:
 * memoized rows and one shared clock should keep actions flat as the list grows.
 * React's production build, as the console ships; each figure is the time
 * from the input to the DOM showing its effect.
 * Run: npx tsx test/bench/approvals-bench.ts
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { printTable, summarize } from './stats.ts';

// jsdom ships no types; this is the little of it we use.
const { JSDOM } = createRequire(import.meta.url)('jsdom') as {
  JSDOM: new (
    html: string,
    options: { url: string; pretendToBeVisual: boolean },
  ) => { window: Window & typeof globalThis };
};
const dom = new JSDOM('<!doctype html><html><body><div id="root"></div></body></html>', {
  url: 'http://127.0.0.1:7823/console/',
  pretendToBeVisual: true,
});
const g = globalThis as Record<string, unknown>;
for (const key of Object.getOwnPropertyNames(dom.window)) {
  if (!(key in g)) g[key] = (dom.window as unknown as Record<string, unknown>)[key];
}
g.window = dom.window;
g.document = dom.window.document;
process.env.NODE_ENV = 'production';

const { createElement } = await import('react');
const { createRoot } = await import('react-dom/client');
const { Approvals } = await import('../../renderer/screens/approvals/approvals.tsx');
const { ConsoleProvider } = await import('../../renderer/lib/console-context.tsx');
const { FakeApi, makeStaged } = await import('../renderer/fake-api.ts');

const ROUNDS = Number(process.env.APPROVALS_BENCH_ROUNDS ?? 7);
const rows = () => document.querySelectorAll('li[data-id]').length;
const key = (k: string) => window.dispatchEvent(new window.KeyboardEvent('keydown', { key: k, bubbles: true }));
const tick = () => new Promise<void>((r) => setImmediate(r));
const selectedIndex = () =>
  [...document.querySelectorAll('li[data-id]')].findIndex((li) => li.getAttribute('aria-current') === 'true');

/** Time from `action` until `done()` holds (React renders on its scheduler, so poll between macrotasks). */
async function timed(action: () => void, done: () => boolean): Promise<number> {
  const t = performance.now();
  action();
  for (let i = 0; !done(); i++) {
    if (i > 100_000) throw new Error('the screen never reached the expected state');
    await tick();
  }
  return performance.now() - t;
}

async function round(n: number) {
  const fake = new FakeApi({ staged: Array.from({ length: n }, (_, i) => makeStaged(i)) });
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  const env = { mode: 'browser' as const, api: fake.api, exportHref: () => null };

  const render = await timed(
    () => root.render(createElement(ConsoleProvider, { value: env }, createElement(Approvals))),
    () => rows() === n,
  );
  // passive effects (the keyboard listener, the clock subscription) run after the first paint
  for (let i = 0; i < 20; i++) await tick();
  const move = await timed(
    () => key('j'),
    () => selectedIndex() === 1,
  );
  const approve = await timed(
    () => key('a'),
    () => rows() === n - 1 && selectedIndex() === 1,
  );
  const insert = await timed(
    () => fake.emit({ type: 'staged', item: makeStaged(n + 1) }),
    () => rows() === n,
  );

  root.unmount();
  container.remove();
  return { render, move, approve, insert };
}

const results = new Map<number, Record<'render' | 'move' | 'approve' | 'insert', number[]>>();
for (const n of [50, 500]) {
  const acc = { render: [] as number[], move: [] as number[], approve: [] as number[], insert: [] as number[] };
  await round(n); // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    const r = await round(n);
    for (const k of Object.keys(acc) as (keyof typeof acc)[]) acc[k].push(r[k]);
  }
  results.set(n, acc);
}

const labels = {
  render: 'first render (ms)',
  move: 'keyboard move j (ms)',
  approve: 'keyboard approve a (ms)',
  insert: 'live insert (ms)',
} as const;
const small = results.get(50)!;
const big = results.get(500)!;
printTable(
  `Approvals with 50 vs 500 pending writes (p50 of ${ROUNDS} rounds, React production build in jsdom)`,
  ['measure', '50 items', '500 items', 'ratio 500/50'],
  (Object.keys(labels) as (keyof typeof labels)[]).map((k) => {
    const a = summarize(small[k]).p50;
    const b = summarize(big[k]).p50;
    return [labels[k], a, b, b / a];
  }),
);
dom.window.close();
process.exit(0);
