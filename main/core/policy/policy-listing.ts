import type { RegisteredTool } from '../calls/registry.ts';
import type { PolicyGate } from './policy-gate.ts';
import type { PolicyCaller } from './policy.ts';

/** Visible sets kept per policy (one per kind of caller and registry state, in practice a handful). */
const MAX_SETS = 64;

export interface PolicyListingDeps {
  gate: Pick<PolicyGate, 'mayList' | 'factsOf'>;
  /** the person's policy text, or null when the shipped default is in force */
  customPolicy: () => string | null;
}

/**
 * What `tools/list` shows is what the policy lets the caller call: the same
 * `call` decision the pipeline asks (policy-gate.ts), asked of each tool the
 * registry's rule shows, for every call at once (main/policy/cedar-engine.ts
 * `mayList`: a tool is left out only when the policy refuses it whatever the
 * arguments, target and time). Under the shipped default the registry's rule
 * is the answer, as test/policy/default-equivalence.test.ts proves they
 * decide alike, so nothing is asked. A custom policy's answer is kept per
 * visible set: the caller's facts and the entries' revisions (a changed tool
 * is a new revision, main/mcp/list-cache.ts), emptied when the policy text changes.
 */
export class PolicyListing {
  private text: string | null = null;
  private seen: string | null | undefined = undefined;
  private generation = 0;
  private readonly sets = new Map<string, readonly RegisteredTool[]>();

  constructor(private readonly deps: PolicyListingDeps) {}

  /** Changes whenever the policy in force does: a list fingerprinted with it (main/mcp/list-changed.ts) is told to re-list. */
  revision(): number {
    const text = this.deps.customPolicy();
    if (text !== this.seen) {
      this.seen = text;
      this.generation++;
    }
    return this.generation;
  }

  async listed(caller: PolicyCaller, entries: readonly RegisteredTool[]): Promise<readonly RegisteredTool[]> {
    const text = this.deps.customPolicy();
    if (text === null) return entries;
    if (text !== this.text) {
      this.text = text;
      this.sets.clear();
    }
    const key = `${callerKey(caller, this.deps.gate.factsOf(caller))}\n${entries.map((e) => e.revision).join(',')}`;
    const hit = this.sets.get(key);
    if (hit) {
      // most recently used last
      this.sets.delete(key);
      this.sets.set(key, hit);
      return hit;
    }
    const allowed = await Promise.all(entries.map((e) => this.deps.gate.mayList(caller, e)));
    const out = Object.freeze(entries.filter((_, i) => allowed[i]));
    // the policy changed while it was asked: this answer is the old one's
    if (this.deps.customPolicy() !== text) return out;
    if (this.sets.size >= MAX_SETS) this.sets.delete(this.sets.keys().next().value!);
    this.sets.set(key, out);
    return out;
  }
}

/** Everything of the caller the policy's principal is built from (policy.ts userEntity), and the facts beside it. */
function callerKey(c: PolicyCaller, facts: unknown): string {
  const t = c.token;
  return JSON.stringify([
    c.user.id,
    c.user.login,
    c.user.role,
    [...c.capabilities],
    c.client,
    t ? [t.id, t.label, t.scope] : null,
    facts ?? null,
  ]);
}
