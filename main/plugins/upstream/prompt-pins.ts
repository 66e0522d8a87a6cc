import type { UpstreamPromptView } from '../../contract/upstreams.ts';
import type { ListedPrompt } from '../../core/calls/surface.ts';
import type { PinnedPrompt, PromptDefinition } from './upstream-data.ts';
import { approve, hashOf, namespaced, pinView, reconcilePins, type PinKind, type Reconciled } from './pinning.ts';

/**
 * Upstream prompts pinned like tools (pinning.ts; docs/upstreams.md, "Prompts
 * and resources"): a prompt's name, title, description and arguments steer a
 * model before any get, as a tool's description does, so a new prompt or one
 * whose definition changed waits, offered to no client, until a person
 * approves it. Its messages come with each get and are not pinned.
 */

const FIELDS = ['name', 'title', 'description', 'arguments'] as const;
const text = (v: unknown, max: number): string | undefined => (typeof v === 'string' ? v.slice(0, max) : undefined);
const opt = <K extends string, V>(k: K, v: V | undefined) => (v === undefined ? {} : ({ [k]: v } as Record<K, V>));

/** A listed prompt (the upstream's raw JSON) cut down to what is pinned and offered, bounded. */
export function promptDefinitionOf(own: string, raw: Record<string, unknown>): PromptDefinition {
  const args = Array.isArray(raw.arguments)
    ? (raw.arguments as Array<Record<string, unknown>>).filter((a) => typeof a?.name === 'string').slice(0, 100)
    : null;
  return {
    name: own,
    ...opt('title', text(raw.title, 200)),
    ...opt('description', text(raw.description, 10_000)),
    ...(args
      ? {
          arguments: args.map((a) => ({
            name: (a.name as string).slice(0, 128),
            ...opt('description', text(a.description, 2000)),
            ...(typeof a.required === 'boolean' ? { required: a.required } : {}),
          })),
        }
      : {}),
  };
}

/** Only the pinned fields, in case a stored definition carries more. */
const pinned = (d: PromptDefinition): PromptDefinition => ({
  name: d.name,
  ...opt('title', d.title),
  ...opt('description', d.description),
  ...opt('arguments', d.arguments),
});

export const promptHash = (def: PromptDefinition): string => hashOf(pinned(def));

const PROMPTS: PinKind<PromptDefinition, PinnedPrompt> = {
  hash: promptHash,
  fresh: (name) => ({ name, approved: null, pending: null, hidden: false, removed: false }),
  reason: () => 'changed',
};

/**
 * A fresh listing against the prompt pins. `null` pins (none yet: stored
 * before prompts were pinned, or an OAuth upstream before its first listing)
 * pin this listing approved, once: `first` says so.
 */
export function reconcilePrompts(
  pins: readonly PinnedPrompt[] | null,
  listed: readonly PromptDefinition[],
): Reconciled<PinnedPrompt> & { first: boolean } {
  const r = reconcilePins(pins ?? [], listed, PROMPTS);
  return pins === null
    ? { pins: r.pins.map((p) => approve(p)), quarantined: [], removed: [], first: true }
    : { ...r, first: false };
}

/** The prompt as prompts/list shows it: its approved definition under the namespaced name. */
export function listedPrompt(upstream: string, pin: PinnedPrompt): ListedPrompt {
  return { ...pinned(pin.approved!.definition), name: namespaced(upstream, pin.name) };
}

export function promptView(upstream: string, pin: PinnedPrompt): UpstreamPromptView {
  const def = pin.pending?.definition ?? pin.approved?.definition;
  return {
    ...pinView(upstream, pin, FIELDS),
    prompt: pin.name,
    title: def?.title ?? null,
    description: def?.description ?? null,
  };
}
