import type { z } from 'zod';
import { NAMESPACE_SEPARATOR, type UpstreamReviewInput } from '../../contract/upstreams.ts';
import { GatehouseError } from '../../core/errors.ts';
import type { PinnedTool } from './upstream-data.ts';
import { approve } from './pinning.ts';

/**
 * A person's review of an upstream's tools: approve (what is listed now
 * becomes the pinned definition), hide, mark read or write. Names are the
 * upstream's own or the namespaced ones; an unknown name refuses the whole
 * review, so nothing is half done.
 */
export function applyReview(id: string, pins: readonly PinnedTool[], input: z.output<typeof UpstreamReviewInput>): PinnedTool[] {
  const consent = input.consent ?? [];
  const prefix = `${id}${NAMESPACE_SEPARATOR}`;
  const own = (n: string) => (n.startsWith(prefix) ? n.slice(prefix.length) : n);
  const names = new Set(pins.map((p) => p.name));
  const unknown = [...input.approve, ...input.hide, ...input.read, ...input.write, ...consent.map((c) => c.tool)].map(own).filter((n) => !names.has(n));
  if (unknown.length) throw new GatehouseError('invalid_value', `upstream '${id}' has no tool ${[...new Set(unknown)].slice(0, 10).map((n) => `'${n.slice(0, 128)}'`).join(', ')} (see gatehouse upstreams tools ${id})`);
  const both = input.read.map(own).filter((n) => input.write.map(own).includes(n));
  if (both.length) throw new GatehouseError('invalid_value', `a tool is either read or write: ${both.slice(0, 10).join(', ')}`);
  const set = (list: string[]) => new Set(list.map(own));
  checkConsent(id, pins, consent.map((c) => ({ tool: own(c.tool), hash: c.hash })));
  const [approveSet, hideSet, readSet, writeSet] = [set([...input.approve, ...consent.map((c) => c.tool)]), set(input.hide), set(input.read), set(input.write)];
  for (const n of approveSet) if (hideSet.has(n)) throw new GatehouseError('invalid_value', `'${n}' cannot be approved and hidden at once`);
  return pins.map((p) => {
    let next = p;
    if (approveSet.has(p.name) || (input.approve_all && p.pending && !p.hidden)) next = approve(next);
    if (hideSet.has(p.name)) next = { ...next, hidden: true };
    if (readSet.has(p.name)) next = { ...next, marked: 'read' };
    if (writeSet.has(p.name)) next = { ...next, marked: 'write' };
    return next;
  });
}

/** Consent binds to what the person saw: every named tool must still wait with exactly that definition. */
function checkConsent(id: string, pins: readonly PinnedTool[], consent: Array<{ tool: string; hash: string }>): void {
  const moved = consent.filter((c) => pins.find((p) => p.name === c.tool)?.pending?.hash !== c.hash);
  if (moved.length) {
    throw new GatehouseError('conflict', `the definition of ${moved.slice(0, 10).map((c) => `'${c.tool.slice(0, 128)}'`).join(', ')} on upstream '${id}' changed (or was approved) since it was shown to you: nothing was approved; look at the tools again`);
  }
}
