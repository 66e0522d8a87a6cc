import type { EntityJson, PolicyQuery } from '../core/policy/policy.ts';
import { tagClassesOf, type TagClasses } from './tag-classes.ts';

/**
 * What a policy set can read of a request, found in its JSON form (Cedar's
 * policyToJson): every name that appears anywhere in it (attribute names of
 * `.` and `has`, record keys, string literals; more than needed is only
 * less narrowing), and whether `context` is used other than through one of
 * its attributes (`context == {...}` compares the whole record).
 *
 * A request narrowed to those names decides exactly as the whole one: an
 * entity's attributes are reachable only by name (entities compare by uid),
 * so an attribute whose name the policies never write cannot change an
 * answer; nested records are kept whole. The narrowed request is what the
 * engine sends to Cedar and keys its decisions by: with the default policy,
 * which reads neither the time nor the argument names, a new minute or new
 * arguments no longer cost a full evaluation (~0.3 ms: converting the
 * entities into the WASM engine is most of it, the policy set being parsed
 * once per change).
 */
export interface PolicyReads {
  names: ReadonlySet<string>;
  wholeContext: boolean;
  /** a `getTag` / `hasTag` whose tag is not a literal: then every tag is kept */
  anyTag: boolean;
  /** argument tags read only by `like` / `==` tests: decisions are kept per outcome of those tests (tag-classes.ts) */
  classes: TagClasses;
}

export function readsOf(policies: readonly unknown[]): PolicyReads {
  const names = new Set<string>();
  let wholeContext = false;
  let anyTag = false;
  const walk = (node: unknown, underAttr: boolean): void => {
    if (typeof node === 'string') return void names.add(node);
    if (Array.isArray(node)) return node.forEach((x) => walk(x, false));
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      names.add(k);
      if (k === 'Var' && v === 'context' && !underAttr) wholeContext = true;
      if ((k === 'getTag' || k === 'hasTag') && !literalTag(v)) anyTag = true;
      if ((k === '.' || k === 'has') && v && typeof v === 'object' && !Array.isArray(v)) {
        const { left, ...rest } = v as Record<string, unknown>;
        walk(left, true);
        walk(rest, false);
      } else walk(v, false);
    }
  };
  for (const p of policies) walk(p, false);
  return { names, wholeContext, anyTag, classes: tagClassesOf(policies) };
}

const literalTag = (v: unknown): boolean => {
  const right = v && typeof v === 'object' ? (v as { right?: unknown }).right : undefined;
  return !!right && typeof right === 'object' && typeof (right as { Value?: unknown }).Value === 'string';
};

/** The request with only the top-level attributes and tags (of each entity, and of the context unless it is read whole) the policies can read. */
export function narrowed(q: PolicyQuery, reads: PolicyReads): PolicyQuery {
  // Plain loops: this runs on every call (no Array.prototype.map callback to deoptimize in).
  const keep = <T extends object>(attrs: T): Partial<T> => {
    const out: Partial<T> = {};
    for (const k in attrs) if (reads.names.has(k)) out[k] = attrs[k];
    return out;
  };
  const entities: EntityJson[] = [];
  for (const e of q.entities) {
    const out: EntityJson = { uid: e.uid, attrs: keep(e.attrs), parents: e.parents };
    if (e.tags) out.tags = reads.anyTag ? e.tags : keep(e.tags);
    entities.push(out);
  }
  const context = reads.wholeContext ? q.context : keep(q.context);
  return { action: q.action, principal: q.principal, resource: q.resource, context, entities };
}
