import { createHash } from 'node:crypto';
import type { FieldChange } from '../../contract/staged.ts';
import type { QuarantineReason, ToolClass, ToolState, UpstreamToolView } from '../../contract/upstreams.ts';
import { NAMESPACE_SEPARATOR } from '../../contract/upstreams.ts';
import { LEGACY_RESOURCE_URI_KEY } from '../../contract/mcp-apps.ts';
import type { PinnedTool, ToolDefinition } from './upstream-data.ts';

/**
 * Pinning (docs/upstreams.md): each tool definition an upstream lists is
 * hashed; a person's approval pins the hash. A listed definition that differs
 * from the pinned one, and a tool never approved, wait in quarantine (not
 * offered to clients) until a person approves them; a hidden tool is never
 * offered. Pure functions over the stored pins.
 */

const FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', '_meta'] as const;

/**
 * The parts of a listed tool that are kept with its pin (no icons): its definition and its `_meta`, which
 * clients get with it. Of `_meta` only the MCP Apps part is hashed (pinnedToolMeta); the rest is listed as
 * approved and not compared, so a tool without a view hashes as before `_meta` was kept.
 */
export function definitionOf(tool: {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  execution?: Record<string, unknown>;
}): ToolDefinition {
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    ...(tool._meta && typeof tool._meta === 'object' ? { _meta: tool._meta } : {}),
    ...(tool.execution && typeof tool.execution === 'object' ? { execution: tool.execution } : {}),
  };
}

/** The parts of a tool's `_meta` that are pinned: its `ui` (the view it names, who may call it) and the deprecated flat key. */
export function pinnedToolMeta(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  const out: Record<string, unknown> = {};
  if (meta.ui !== undefined) out.ui = meta.ui;
  if (meta[LEGACY_RESOURCE_URI_KEY] !== undefined) out[LEGACY_RESOURCE_URI_KEY] = meta[LEGACY_RESOURCE_URI_KEY];
  return Object.keys(out).length ? out : undefined;
}

/** What is hashed and compared of a tool: its definition, and of its `_meta` only the pinned part. */
function hashed(def: ToolDefinition): ToolDefinition {
  // `execution` says how the tool is called (as a task or not), which the gateway handles; not hashed, so pins made
  // before it was kept stay approved (reconcilePins keeps the approved one's up to date instead)
  const { _meta, execution: _execution, ...rest } = definitionOf(def);
  const ui = pinnedToolMeta(_meta);
  return ui ? { ...rest, _meta: ui } : rest;
}

/** JSON with every object's keys sorted, so the hash does not depend on key order. */
const stable = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  ) ?? 'null';

/** Two sets of pins alike, whatever their keys' order (a re-listing that changed nothing is not saved). */
export const samePins = (a: readonly unknown[], b: readonly unknown[]): boolean => stable(a) === stable(b);

/**
 * Two lists of pins alike, as samePins says, at a fraction of its cost where most pins are the same objects or
 * hold the same hashes (a re-listing of thousands of tools that changed nothing): fields are compared by
 * identity first and as stable JSON only where they differ.
 */
export function samePinList(a: readonly object[], b: readonly object[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Record<string, unknown>;
    const y = b[i] as Record<string, unknown>;
    if (x === y) continue;
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const k of keys) if (x[k] !== y[k] && stable(x[k]) !== stable(y[k])) return false;
  }
  return true;
}

/** The hash a pin holds, of a definition already cut down to its pinned parts. */
export const hashOf = (pinned: unknown): string =>
  `sha256:${createHash('sha256').update(stable(pinned)).digest('hex')}`;

export const definitionHash = (def: ToolDefinition): string => hashOf(hashed(def));

/** What changed between two definitions, field by field (old -> new). */
export function changesOf<D extends object>(
  fields: ReadonlyArray<keyof D & string>,
  before: D | null,
  after: D,
): FieldChange[] {
  return fields
    .filter((f) => stable(before?.[f]) !== stable(after[f]))
    .map((f) => ({
      field: f,
      ...(before?.[f] !== undefined ? { before: before[f] } : {}),
      ...(after[f] !== undefined ? { after: after[f] } : {}),
    }));
}

export const definitionChanges = (before: ToolDefinition | null, after: ToolDefinition): FieldChange[] =>
  changesOf(FIELDS, before && hashed(before), hashed(after));

const readOnlyHint = (def: ToolDefinition | undefined): boolean => def?.annotations?.readOnlyHint === true;

/** Only the read-only hint differs: the same tool, asking to be classed otherwise. */
function onlyHintFlipped(before: ToolDefinition, after: ToolDefinition): boolean {
  if (readOnlyHint(before) === readOnlyHint(after)) return false;
  const strip = (d: ToolDefinition) => ({ ...d, annotations: { ...d.annotations, readOnlyHint: undefined } });
  return definitionHash(strip(before)) === definitionHash(strip(after));
}

/** What a tool's pin and a prompt's pin share (prompt-pins.ts pins prompts with it). */
export interface Pin<D extends { name: string }> {
  name: string;
  approved: { hash: string; definition: D } | null;
  pending: { hash: string; definition: D; reason: QuarantineReason } | null;
  hidden: boolean;
  removed: boolean;
}

/** How one kind of definition is pinned: its hash, a pin never seen before, why a changed one waits. */
export interface PinKind<D extends { name: string }, P extends Pin<D>> {
  hash(def: D): string;
  fresh(name: string): P;
  reason(before: D, after: D): QuarantineReason;
  /** the approved definition brought up to date with the listed one's unhashed parts (same hash) */
  current?(approved: D, listed: D): D;
}

const TOOLS: PinKind<ToolDefinition, PinnedTool> = {
  hash: definitionHash,
  fresh: (name) => ({ name, approved: null, pending: null, hidden: false, marked: null, removed: false }),
  reason: (before, after) => (onlyHintFlipped(before, after) ? 'hint_flipped' : 'changed'),
  current: (approved, listed) => {
    if (stable(approved.execution) === stable(listed.execution)) return approved;
    const { execution: _was, ...rest } = approved;
    return listed.execution !== undefined ? { ...rest, execution: listed.execution } : rest;
  },
};

/**
 * A tool is a read when a person marked it so, or accepted its readOnlyHint: true when approving it; else a write.
 * A tool never approved shows the class approving its listed definition would give (it is offered to no one yet).
 */
export const classOf = (pin: PinnedTool): ToolClass =>
  pin.marked ?? (readOnlyHint(pin.approved?.definition ?? pin.pending?.definition) ? 'read' : 'write');

export const stateOf = <D extends { name: string }>(pin: Pin<D>): ToolState =>
  pin.hidden ? 'hidden' : pin.approved && !pin.pending ? 'approved' : 'quarantined';

/** Offered to clients: approved, not hidden, still listed. */
export const isOffered = <D extends { name: string }>(pin: Pin<D>): boolean =>
  stateOf(pin) === 'approved' && !pin.removed;

export interface Reconciled<P = PinnedTool> {
  pins: P[];
  /** upstream names, for the log and the console */
  quarantined: string[];
  removed: string[];
}

/** Sets a fresh listing against the pins: unchanged stays approved, changed or new waits for a person, missing is marked removed. */
export function reconcilePins<D extends { name: string }, P extends Pin<D>>(
  pins: readonly P[],
  listed: readonly D[],
  kind: PinKind<D, P>,
): Reconciled<P> {
  const byName = new Map(pins.map((p) => [p.name, p]));
  const seen = new Set<string>();
  const out: P[] = [];
  const quarantined: string[] = [];
  for (const def of listed) {
    if (seen.has(def.name)) continue;
    seen.add(def.name);
    const pin = byName.get(def.name) ?? kind.fresh(def.name);
    const hash = kind.hash(def);
    if (pin.approved?.hash === hash) {
      const current = kind.current ? kind.current(pin.approved.definition, def) : pin.approved.definition;
      // the same object when nothing unhashed changed: samePinList then sees an unchanged pin at a glance
      const approved = current === pin.approved.definition ? pin.approved : { hash, definition: current };
      out.push({ ...pin, approved, pending: null, removed: false });
      continue;
    }
    const reason = !pin.approved ? 'new' : kind.reason(pin.approved.definition, def);
    if (pin.pending?.hash !== hash && !pin.hidden) quarantined.push(def.name);
    out.push({ ...pin, pending: { hash, definition: def, reason }, removed: false });
  }
  const removed: string[] = [];
  for (const pin of pins) {
    if (seen.has(pin.name)) continue;
    if (!pin.removed) removed.push(pin.name);
    out.push({ ...pin, pending: null, removed: true });
  }
  return { pins: out, quarantined, removed };
}

export const reconcile = (pins: readonly PinnedTool[], listed: readonly ToolDefinition[]): Reconciled =>
  reconcilePins(pins, listed, TOOLS);

/** A person's approval of what is listed now: the pending definition becomes the pinned one. */
export function approve<P extends Pin<{ name: string }>>(pin: P): P {
  if (!pin.pending) return { ...pin, hidden: false };
  return {
    ...pin,
    approved: { hash: pin.pending.hash, definition: pin.pending.definition },
    pending: null,
    hidden: false,
  };
}

export const namespaced = (upstream: string, tool: string): string => `${upstream}${NAMESPACE_SEPARATOR}${tool}`;

/** What a person sees of any pin: the namespaced name, state, hashes and the diff of what waits (old -> new). */
export function pinView<D extends { name: string }>(
  upstream: string,
  pin: Pin<D>,
  fields: ReadonlyArray<keyof D & string>,
) {
  return {
    name: namespaced(upstream, pin.name),
    state: stateOf(pin),
    hash: pin.approved?.hash ?? null,
    pending: pin.pending
      ? {
          reason: pin.pending.reason,
          hash: pin.pending.hash,
          changes: changesOf(fields, pin.approved?.definition ?? null, pin.pending.definition),
        }
      : null,
    removed: pin.removed,
  };
}

export function toolView(upstream: string, pin: PinnedTool): UpstreamToolView {
  const def = pin.pending?.definition ?? pin.approved?.definition;
  const base = pinView(upstream, pin, FIELDS);
  return {
    ...base,
    pending:
      base.pending && pin.pending
        ? { ...base.pending, changes: definitionChanges(pin.approved?.definition ?? null, pin.pending.definition) }
        : base.pending,
    tool: pin.name,
    class: classOf(pin),
    title: def?.title ?? (typeof def?.annotations?.title === 'string' ? def.annotations.title : null),
    description: def?.description ?? null,
  };
}
