import { createHash } from 'node:crypto';
import type { FieldChange } from '../../contract/staged.ts';
import type { ToolClass, ToolState, UpstreamToolView } from '../../contract/upstreams.ts';
import { NAMESPACE_SEPARATOR } from '../../contract/upstreams.ts';
import type { PinnedTool, ToolDefinition } from './upstream-data.ts';

/**
 * Pinning (docs/upstreams.md): each tool definition an upstream lists is
 * hashed; a person's approval pins the hash. A listed definition that differs
 * from the pinned one, and a tool never approved, wait in quarantine (not
 * offered to clients) until a person approves them; a hidden tool is never
 * offered. Pure functions over the stored pins.
 */

const FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

/** The parts of a listed tool that are pinned, nothing else (no `_meta`, no icons). */
export function definitionOf(tool: { name: string; title?: string; description?: string; inputSchema: Record<string, unknown>; outputSchema?: Record<string, unknown>; annotations?: Record<string, unknown> }): ToolDefinition {
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
  };
}

/** JSON with every object's keys sorted, so the hash does not depend on key order. */
const stable = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x)) ?? 'null';

export const definitionHash = (def: ToolDefinition): string => `sha256:${createHash('sha256').update(stable(definitionOf(def))).digest('hex')}`;

/** What changed between two definitions, field by field (old -> new). */
export function definitionChanges(before: ToolDefinition | null, after: ToolDefinition): FieldChange[] {
  return FIELDS.filter((f) => stable(before?.[f]) !== stable(after[f])).map((f) => ({ field: f, ...(before?.[f] !== undefined ? { before: before[f] } : {}), ...(after[f] !== undefined ? { after: after[f] } : {}) }));
}

const readOnlyHint = (def: ToolDefinition | undefined): boolean => def?.annotations?.readOnlyHint === true;

/** Only the read-only hint differs: the same tool, asking to be classed otherwise. */
function onlyHintFlipped(before: ToolDefinition, after: ToolDefinition): boolean {
  if (readOnlyHint(before) === readOnlyHint(after)) return false;
  const strip = (d: ToolDefinition) => ({ ...d, annotations: { ...d.annotations, readOnlyHint: undefined } });
  return definitionHash(strip(before)) === definitionHash(strip(after));
}

/**
 * A tool is a read when a person marked it so, or accepted its readOnlyHint: true when approving it; else a write.
 * A tool never approved shows the class approving its listed definition would give (it is offered to no one yet).
 */
export const classOf = (pin: PinnedTool): ToolClass => pin.marked ?? (readOnlyHint(pin.approved?.definition ?? pin.pending?.definition) ? 'read' : 'write');

export const stateOf = (pin: PinnedTool): ToolState => (pin.hidden ? 'hidden' : pin.approved && !pin.pending ? 'approved' : 'quarantined');

/** Offered to clients: approved, not hidden, still listed. */
export const isOffered = (pin: PinnedTool): boolean => stateOf(pin) === 'approved' && !pin.removed;

export interface Reconciled {
  pins: PinnedTool[];
  /** upstream names, for the log and the console */
  quarantined: string[];
  removed: string[];
}

/** Sets a fresh listing against the pins: unchanged stays approved, changed or new waits for a person, missing is marked removed. */
export function reconcile(pins: readonly PinnedTool[], listed: readonly ToolDefinition[]): Reconciled {
  const byName = new Map(pins.map((p) => [p.name, p]));
  const seen = new Set<string>();
  const out: PinnedTool[] = [];
  const quarantined: string[] = [];
  for (const def of listed) {
    if (seen.has(def.name)) continue;
    seen.add(def.name);
    const pin = byName.get(def.name) ?? { name: def.name, approved: null, pending: null, hidden: false, marked: null, removed: false };
    const hash = definitionHash(def);
    if (pin.approved?.hash === hash) {
      out.push({ ...pin, pending: null, removed: false });
      continue;
    }
    const reason = !pin.approved ? 'new' : onlyHintFlipped(pin.approved.definition, def) ? 'hint_flipped' : 'changed';
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

/** A person's approval of what is listed now: the pending definition becomes the pinned one. */
export function approve(pin: PinnedTool): PinnedTool {
  if (!pin.pending) return { ...pin, hidden: false };
  return { ...pin, approved: { hash: pin.pending.hash, definition: pin.pending.definition }, pending: null, hidden: false };
}

export const namespaced = (upstream: string, tool: string): string => `${upstream}${NAMESPACE_SEPARATOR}${tool}`;

export function toolView(upstream: string, pin: PinnedTool): UpstreamToolView {
  const def = pin.pending?.definition ?? pin.approved?.definition;
  return {
    name: namespaced(upstream, pin.name),
    tool: pin.name,
    class: classOf(pin),
    state: stateOf(pin),
    hash: pin.approved?.hash ?? null,
    pending: pin.pending ? { reason: pin.pending.reason, hash: pin.pending.hash, changes: definitionChanges(pin.approved?.definition ?? null, pin.pending.definition) } : null,
    removed: pin.removed,
    title: def?.title ?? (typeof def?.annotations?.title === 'string' ? def.annotations.title : null),
    description: def?.description ?? null,
  };
}
