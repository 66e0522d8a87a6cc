import type {
  UpstreamInstructionsView,
  UpstreamPromptView,
  UpstreamToolView,
  UpstreamViewView,
} from '../contract/upstreams.ts';
import { safe, table } from './output.ts';

/** The tables of an upstream's tools, prompts and views (`add`, `show`, `review`, and `login`'s first consent). */

export const toolRows = (tools: UpstreamToolView[]) =>
  table(
    tools.map((t) => ({
      name: t.name,
      class: t.class,
      state: t.removed ? `${t.state} (removed)` : t.state,
      hash: t.hash ?? '-',
      pending: t.pending ? `${t.pending.reason} -> ${t.pending.hash}` : '',
    })),
    ['name', 'class', 'state', 'hash', 'pending'],
  );

export const promptRows = (prompts: UpstreamPromptView[]) =>
  table(
    prompts.map((p) => ({
      prompt: p.name,
      state: p.removed ? `${p.state} (removed)` : p.state,
      hash: p.hash ?? '-',
      pending: p.pending ? `${p.pending.reason} -> ${p.pending.hash}` : '',
    })),
    ['prompt', 'state', 'hash', 'pending'],
  );

/** Its MCP App views: the URI clients read, what each asks the host for (the consent shows it), pin state. */
export const viewRows = (views: UpstreamViewView[]) =>
  table(
    views.map((v) => ({
      view: v.name,
      state: v.removed ? `${v.state} (removed)` : v.state,
      asks: v.asks.join('; ') || '-',
      hash: v.hash ?? '-',
      pending: v.pending ? `${v.pending.reason} -> ${v.pending.hash}` : '',
    })),
    ['view', 'state', 'asks', 'hash', 'pending'],
  );

/** Its instructions (what it tells the model, given to clients once approved): pin state, hash, and the text a person consents to. */
export const instructionsLines = (i: UpstreamInstructionsView): string[] => [
  safe`instructions  ${i.removed ? `${i.state} (removed)` : i.state}  ${i.hash ?? '-'}${i.pending ? `  ${i.pending.reason} -> ${i.pending.hash}` : ''}  (${i.length} characters${i.length > i.text.length ? `, cut at ${i.text.length}` : ''})`,
  ...(i.text_diff
    ? [
        safe`  text (${i.text_diff.changed_lines} lines changed), approved:`,
        ...indented(i.text_diff.before),
        safe`  waiting:`,
        ...indented(i.text_diff.after),
      ]
    : indented(i.text)),
];

const indented = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => safe`    ${l}`);
