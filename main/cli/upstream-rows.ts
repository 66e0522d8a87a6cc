import type { UpstreamPromptView, UpstreamToolView } from '../contract/upstreams.ts';
import { table } from './output.ts';

/** The tables of an upstream's tools and prompts (`add`, `show`, `review`, and `login`'s first consent). */

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
