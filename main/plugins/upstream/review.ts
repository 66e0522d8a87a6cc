import type { z } from 'zod';
import { NAMESPACE_SEPARATOR, type UpstreamReviewInput } from '../../contract/upstreams.ts';
import { GatehouseError } from '../../core/errors.ts';
import type { PinnedInstructions, PinnedPrompt, PinnedTool, PinnedView } from './upstream-data.ts';
import { INSTRUCTIONS } from './instructions.ts';
import { unwrapViewUri } from './views.ts';
import { approve, type Pin } from './pinning.ts';

type Input = z.output<typeof UpstreamReviewInput>;
type Kind = 'tool' | 'prompt' | 'view' | 'instructions';
/** What a review asks of one kind of pins, by the upstream's own names. */
interface Acts {
  approve: string[];
  hide: string[];
  all: boolean;
  consent: Array<{ name: string; hash: string }>;
  /** further names that must exist (a tool's read and write marks) */
  named?: string[];
}
const LISTED_BY: Record<Kind, string> = { tool: 'tools', prompt: 'prompts', view: 'show', instructions: 'show' };
const quoted = (names: string[]) =>
  [...new Set(names)]
    .slice(0, 10)
    .map((n) => `'${n.slice(0, 128)}'`)
    .join(', ');

/**
 * A person's review of an upstream's tools: approve (what is listed now
 * becomes the pinned definition), hide, mark read or write. Names are the
 * upstream's own or the namespaced ones; an unknown name refuses the whole
 * review, so nothing is half done.
 */
export function applyReview(id: string, pins: readonly PinnedTool[], input: Input): PinnedTool[] {
  const own = ownName(id);
  const both = input.read.map(own).filter((n) => input.write.map(own).includes(n));
  if (both.length)
    throw new GatehouseError('invalid_value', `a tool is either read or write: ${both.slice(0, 10).join(', ')}`);
  const acts: Acts = {
    approve: input.approve.map(own),
    hide: input.hide.map(own),
    all: input.approve_all,
    consent: (input.consent ?? []).map((c) => ({ name: own(c.tool), hash: c.hash })),
    named: [...input.read, ...input.write].map(own),
  };
  const [readSet, writeSet] = [new Set(input.read.map(own)), new Set(input.write.map(own))];
  return reviewPins(id, 'tool', pins, acts).map((p) =>
    readSet.has(p.name) ? { ...p, marked: 'read' } : writeSet.has(p.name) ? { ...p, marked: 'write' } : p,
  );
}

/** The same review of its prompts (`approve_prompts`, `hide_prompts`, `prompt_consent`, `approve_all`); no pins yet reads as none. */
export function applyPromptReview(
  id: string,
  pins: readonly PinnedPrompt[] | null,
  input: Input,
): PinnedPrompt[] | null {
  const own = ownName(id);
  const acts: Acts = {
    approve: input.approve_prompts.map(own),
    hide: input.hide_prompts.map(own),
    all: input.approve_all,
    consent: (input.prompt_consent ?? []).map((c) => ({ name: own(c.prompt), hash: c.hash })),
  };
  if (pins === null && !acts.approve.length && !acts.hide.length && !acts.consent.length) return null;
  return reviewPins(id, 'prompt', pins ?? [], acts);
}

/** The same review of its MCP App views (`view_consent`, `hide_views`, `approve_all`), named by their own ui:// URI or the one clients see. */
export function applyViewReview(id: string, pins: readonly PinnedView[], input: Input): PinnedView[] {
  const own = (uri: string) => unwrapViewUri(id, uri) ?? uri;
  const acts: Acts = {
    approve: [],
    hide: (input.hide_views ?? []).map(own),
    all: input.approve_all,
    consent: (input.view_consent ?? []).map((c) => ({ name: own(c.view), hash: c.hash })),
  };
  if (!acts.hide.length && !acts.consent.length && !acts.all) return [...pins];
  return reviewPins(id, 'view', pins, acts);
}

/** The same review of its instructions (`instructions_consent`, `hide_instructions`, `approve_all`): one pin, named `instructions`. */
export function applyInstructionsReview(
  id: string,
  pins: readonly PinnedInstructions[],
  input: Input,
): PinnedInstructions[] {
  const acts: Acts = {
    approve: [],
    hide: input.hide_instructions ? [INSTRUCTIONS] : [],
    all: input.approve_all,
    consent: input.instructions_consent ? [{ name: INSTRUCTIONS, hash: input.instructions_consent.hash }] : [],
  };
  if (!acts.hide.length && !acts.consent.length && !acts.all) return [...pins];
  return reviewPins(id, 'instructions', pins, acts);
}

const ownName = (id: string) => {
  const prefix = `${id}${NAMESPACE_SEPARATOR}`;
  return (n: string) => (n.startsWith(prefix) ? n.slice(prefix.length) : n);
};

function reviewPins<P extends Pin<{ name: string }>>(id: string, kind: Kind, pins: readonly P[], acts: Acts): P[] {
  const names = new Set(pins.map((p) => p.name));
  const unknown = [...acts.approve, ...acts.hide, ...(acts.named ?? []), ...acts.consent.map((c) => c.name)].filter(
    (n) => !names.has(n),
  );
  if (unknown.length)
    throw new GatehouseError(
      'invalid_value',
      `upstream '${id}' has no ${kind} ${quoted(unknown)} (see gatehouse upstreams ${LISTED_BY[kind]} ${id})`,
    );
  // Consent binds to what the person saw: every named one must still wait with exactly that definition (or, one
  // hidden with nothing waiting, be offered again with the definition approved before).
  const moved = acts.consent.filter((c) => {
    const p = pins.find((x) => x.name === c.name);
    return (p?.pending?.hash ?? (p?.hidden ? p.approved?.hash : undefined)) !== c.hash;
  });
  if (moved.length)
    throw new GatehouseError(
      'conflict',
      `the definition of ${kind} ${quoted(moved.map((c) => c.name))} on upstream '${id}' changed (or was approved) since it was shown to you: nothing was approved; look at the ${LISTED_BY[kind]} again`,
    );
  const approveSet = new Set([...acts.approve, ...acts.consent.map((c) => c.name)]);
  const hideSet = new Set(acts.hide);
  for (const n of approveSet)
    if (hideSet.has(n))
      throw new GatehouseError('invalid_value', `'${n.slice(0, 128)}' cannot be approved and hidden at once`);
  return pins.map((p) => {
    const next = approveSet.has(p.name) || (acts.all && p.pending && !p.hidden) ? approve(p) : p;
    return hideSet.has(p.name) ? { ...next, hidden: true } : next;
  });
}
