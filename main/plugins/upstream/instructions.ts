import type { UpstreamInstructionsView } from '../../contract/upstreams.ts';
import { compactDiff } from '../../lib/line-diff.ts';
import type { InstructionsDefinition, PinnedInstructions } from './upstream-data.ts';
import { hashOf, pinView, reconcilePins, type PinKind, type Reconciled } from './pinning.ts';

/**
 * An upstream's `instructions` (docs/upstreams.md, "Instructions"): text its
 * server gives with its initialize (or server/discover) answer, which a host
 * puts before the model as it does a tool's description. Pinned like a
 * definition: its hash is fixed when a person consents, a changed text waits
 * (clients keep getting the approved one) until a person approves it, one
 * never approved is given to no client.
 */

/** The most of one upstream's instructions clients are given (server-everything's are 1,575 characters). */
export const MAX_INSTRUCTIONS_CHARS = 4000;
/** The most of all upstreams' instructions one initialize answer carries, beside Gatehouse's own manual. */
export const MAX_TOTAL_INSTRUCTIONS_CHARS = 16_000;
export const INSTRUCTIONS = 'instructions';

/** The instructions an upstream sent (already masked), as a listing of zero or one definition, cut at the bound. */
export function instructionsListing(sent: string | undefined): InstructionsDefinition[] {
  if (typeof sent !== 'string' || !sent.trim()) return [];
  return [{ name: INSTRUCTIONS, text: sent.slice(0, MAX_INSTRUCTIONS_CHARS), length: sent.length }];
}

/** Only the text is hashed: it is all clients get (a change past the bound reaches no client, so waits for no one). */
export const instructionsHash = (d: InstructionsDefinition): string => hashOf({ name: d.name, text: d.text });

const KIND: PinKind<InstructionsDefinition, PinnedInstructions> = {
  hash: instructionsHash,
  fresh: (name) => ({ name, approved: null, pending: null, hidden: false, removed: false }),
  reason: () => 'changed',
  // the length past the bound is not hashed: kept up to date with the approved text
  current: (approved, listed) => ({ ...approved, length: listed.length }),
};

export const reconcileInstructions = (
  pins: readonly PinnedInstructions[],
  listed: readonly InstructionsDefinition[],
): Reconciled<PinnedInstructions> => reconcilePins(pins, listed, KIND);

/** What clients are given: the approved text while a person's approval covers it (a changed one waiting: still the approved), else nothing. */
export function givenInstructions(pins: readonly PinnedInstructions[]): string | null {
  const pin = pins.find((p) => p.name === INSTRUCTIONS);
  if (!pin?.approved || pin.hidden || pin.removed) return null;
  const d = pin.approved.definition;
  return d.length > d.text.length
    ? `${d.text}\n[cut by Gatehouse at ${MAX_INSTRUCTIONS_CHARS} of ${d.length} characters]`
    : d.text;
}

export function instructionsView(upstream: string, pin: PinnedInstructions): UpstreamInstructionsView {
  const def = pin.pending?.definition ?? pin.approved?.definition;
  const base = pinView(upstream, pin, ['text']);
  const diff = pin.pending
    ? compactDiff(pin.approved?.definition.text ?? '', pin.pending.definition.text, { maxLines: 200 })
    : null;
  return {
    ...base,
    // the diff below says what changed; the field change would repeat the whole text twice
    pending: base.pending ? { ...base.pending, changes: [] } : null,
    name: INSTRUCTIONS,
    title: null,
    description: null,
    text: def?.text ?? '',
    length: def?.length ?? 0,
    text_diff: diff ? { before: diff.before, after: diff.after, changed_lines: diff.changed_lines } : null,
  };
}

/** One upstream's section of the initialize answer's instructions: whose words they are and how its names read. */
export const instructionsSection = (upstream: string, text: string): string =>
  `## Instructions of upstream '${upstream}' (its own words, passed on by Gatehouse; its tools, prompts and resources are named ${upstream}__<name> and gatehouse-upstream://${upstream}/...)\n${text}`;

/**
 * The initialize answer's instructions: Gatehouse's own, then each upstream's section (in the order given)
 * while all of them fit MAX_TOTAL_INSTRUCTIONS_CHARS; one that does not is named, its text left out.
 */
export function composeInstructions(own: string, upstreams: ReadonlyArray<{ id: string; text: string }>): string {
  const parts = [own];
  let used = 0;
  for (const u of upstreams) {
    if (used + u.text.length > MAX_TOTAL_INSTRUCTIONS_CHARS) {
      parts.push(
        `## Instructions of upstream '${u.id}': left out (all upstreams' instructions may take ${MAX_TOTAL_INSTRUCTIONS_CHARS} characters)`,
      );
      continue;
    }
    used += u.text.length;
    parts.push(instructionsSection(u.id, u.text));
  }
  return parts.join('\n\n');
}
