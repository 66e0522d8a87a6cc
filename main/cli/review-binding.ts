import { createInterface } from 'node:readline/promises';
import type { UpstreamPromptView, UpstreamToolView, UpstreamViewView } from '../contract/upstreams.ts';
import { safe, UsageError } from './output.ts';

/**
 * `upstreams review ID --approve NAME[=HASH]`: every approval names the definition the person saw (the attack it stops:
 * a review printed a harmless change, the upstream then swapped in another, and an unbound --approve
 * pinned the new one). With `=sha256:...` the service approves only while that is still the definition
 * that waits; without it, the definition that waits now is printed with its hash and a person confirms it
 * in the terminal. With no terminal, a bare name is refused: there is no one to have seen it.
 */
export interface Bound {
  consent: Array<{ tool: string; hash: string }>;
  prompt_consent: Array<{ prompt: string; hash: string }>;
  /** present once a view is approved */
  view_consent?: Array<{ view: string; hash: string }>;
}

type Pin = UpstreamToolView | UpstreamPromptView | UpstreamViewView;
type Kind = 'tool' | 'prompt' | 'view';

/** `NAME=sha256:<hex>` as its parts; a bare name has no hash. */
export function namedHash(arg: string): { name: string; hash: string | null } {
  const at = arg.lastIndexOf('=sha256:');
  return at === -1 ? { name: arg, hash: null } : { name: arg.slice(0, at), hash: arg.slice(at + 1) };
}

/** The hash an approval of this pin would pin: what waits, or (a hidden one offered again) what was approved. */
const offered = (p: Pin): string | null => p.pending?.hash ?? p.hash;

const ownOf = (p: Pin): string => ('tool' in p ? p.tool : 'prompt' in p ? p.prompt : p.view);

function find(pins: readonly Pin[], name: string, kind: Kind, id: string): Pin {
  const pin = pins.find((p) => p.name === name || ownOf(p) === name);
  if (!pin) throw new UsageError(`upstream '${id}' has no ${kind} '${name.slice(0, 128)}'`);
  return pin;
}

/** What a person is asked to confirm: the name, the hash and, for a changed one, the diff. */
function shown(p: Pin, kind: Kind): string[] {
  const head = safe`${kind} ${p.name}  ${p.pending ? p.pending.reason : 'offer again'}  ${offered(p) ?? '-'}`;
  const changes = (p.pending?.changes ?? []).flatMap((c) => [
    safe`  ${c.field}:`,
    ...(c.before !== undefined ? [safe`    - ${JSON.stringify(c.before)}`] : []),
    ...(c.after !== undefined ? [safe`    + ${JSON.stringify(c.after)}`] : []),
  ]);
  return [head, ...changes, ...('view' in p ? viewLines(p) : [])];
}

/** A view's asks and, while a changed one waits, its HTML's changed hunks (approved `-`, waiting `+`). */
export function viewLines(v: UpstreamViewView): string[] {
  const indent = (text: string) =>
    text
      .split('\n')
      .filter((l) => l)
      .map((l) => safe`    ${l}`);
  return [
    safe`  asks: ${v.asks.length ? v.asks.join('; ') : 'nothing beyond the default sandbox'}`,
    ...(v.html_diff
      ? [
          safe`  html (${v.html_diff.changed_lines} lines changed), approved:`,
          ...indent(v.html_diff.before),
          safe`  waiting:`,
          ...indent(v.html_diff.after),
        ]
      : []),
  ];
}

export interface Terminal {
  isTTY: boolean;
  /** asks one question; true for yes */
  confirm(question: string): Promise<boolean>;
  print(text: string): void;
}

export const processTerminal: Terminal = {
  isTTY: !!process.stdin.isTTY && !!process.stdout.isTTY,
  async confirm(question) {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      return /^y(es)?$/i.test((await rl.question(question)).trim());
    } finally {
      rl.close();
    }
  },
  print: (text) => void process.stdout.write(`${text}\n`),
};

/**
 * Turns the review's approvals (named with or without their hash, or --approve-all) into consents bound to
 * hashes: a named hash as given; the rest bound to what waits now, once a person at the terminal said yes.
 */
export async function bindApprovals(
  id: string,
  asked: { approve: string[]; approvePrompts: string[]; approveViews?: string[]; all: boolean },
  current: {
    tools: readonly UpstreamToolView[];
    prompts: readonly UpstreamPromptView[];
    views?: readonly UpstreamViewView[];
  },
  term: Terminal,
): Promise<Bound> {
  const bound: Bound = { consent: [], prompt_consent: [] };
  const unbound: Array<{ kind: Kind; pin: Pin }> = [];
  const pinsOf = (kind: Kind): readonly Pin[] =>
    kind === 'tool' ? current.tools : kind === 'prompt' ? current.prompts : (current.views ?? []);
  const take = (kind: Kind, arg: string) => {
    const { name, hash } = namedHash(arg);
    const pin = find(pinsOf(kind), name, kind, id);
    if (hash) push(kind, pin, hash);
    else unbound.push({ kind, pin });
  };
  const push = (kind: Kind, pin: Pin, hash: string) =>
    kind === 'tool'
      ? bound.consent.push({ tool: ownOf(pin), hash })
      : kind === 'prompt'
        ? bound.prompt_consent.push({ prompt: ownOf(pin), hash })
        : (bound.view_consent ??= []).push({ view: ownOf(pin), hash });
  for (const a of asked.approve) take('tool', a);
  for (const a of asked.approvePrompts) take('prompt', a);
  for (const a of asked.approveViews ?? []) take('view', a);
  if (asked.all)
    for (const kind of ['tool', 'prompt', 'view'] as const)
      for (const pin of pinsOf(kind)) if (pin.pending && pin.state !== 'hidden') unbound.push({ kind, pin });
  const toConfirm = [...new Map(unbound.map((u) => [`${u.kind}:${u.pin.name}`, u])).values()];
  if (!toConfirm.length) return bound;
  const text = toConfirm.flatMap(({ kind, pin }) => shown(pin, kind)).join('\n');
  if (!term.isTTY)
    throw new UsageError(
      `an approval names the definition you reviewed:\n${text}\n` +
        `pass it with its hash (--approve NAME=sha256:..., --approve-prompt NAME=sha256:..., --approve-view URI=sha256:...), as printed here and by ` +
        `'gatehouse upstreams review ${id}', or run the command in a terminal to confirm it`,
    );
  term.print(text);
  if (
    !(await term.confirm(
      `Approve ${toConfirm.length === 1 ? 'this definition' : `these ${toConfirm.length} definitions`} as shown? [y/N] `,
    ))
  )
    throw new UsageError('nothing approved');
  for (const { kind, pin } of toConfirm) {
    const hash = offered(pin);
    if (hash) push(kind, pin, hash);
  }
  return bound;
}
