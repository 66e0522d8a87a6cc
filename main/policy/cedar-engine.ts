import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import type { PolicyCheckAnswer } from '../contract/policy.ts';
import type { PolicyAction, PolicyEngine, PolicyQuery, PolicyVerdict } from '../core/policy/policy.ts';
import { GatehouseError } from '../core/errors.ts';
import { avoidJsToWasmInlining } from '../lib/wasm-jit-guard.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { splitPolicies, validationMessage } from './cedar-text.ts';
import { narrowed, readsOf, type PolicyReads } from './policy-reads.ts';
import { classedEntities } from './tag-classes.ts';
import { DecisionMemo, sha256, type DecisionMemoStore } from './decision-memo.ts';

type Cedar = typeof CedarWasm;

export const POLICY_DIR = join(PACKAGE_ROOT, 'policy');
const SCHEMA_NAME = 'gatehouse';
const CACHE_MAX = 2000;

/**
 * The Cedar adapter behind the core's PolicyEngine port. The WASM engine
 * (~4 MB, tens of MB once compiled) loads at the first question, never at
 * start: a CLI command or a service that evaluates nothing pays nothing.
 * The active policy is read through `activeText` at every decision and
 * parsed (into Cedar's own memory: preparsePolicySet) only when its text
 * changed. Each request is narrowed to the attributes the policy can read
 * (policy-reads.ts), and decisions are kept per exact narrowed request, so a
 * repeated call costs a map lookup, and so does one that differs only in
 * what the policy never reads (the time, with the default policy), or in
 * argument values that pass and fail the policy's tests alike (tag-classes.ts);
 * a new policy empties that memory. `narrow: false` sends every request whole (the
 * benchmark's comparison only).
 */
export function createCedarEngine(opts: {
  activeText: () => string | null;
  dir?: string;
  cacheSize?: number;
  narrow?: boolean;
  /** decisions kept across processes (decision-memo.ts): the data dir's, in the service and the CLI */
  memo?: DecisionMemoStore;
}): PolicyEngine & { loaded(): boolean; settled(): Promise<void> } {
  const dir = opts.dir ?? POLICY_DIR;
  let files: { policy: string; schema: string } | null = null;
  const shipped = () =>
    (files ??= {
      policy: readFileSync(join(dir, 'default.cedar'), 'utf8'),
      schema: readFileSync(join(dir, 'gatehouse.cedarschema'), 'utf8'),
    });
  let loading: Promise<Cedar> | null = null;
  let active: { text: string; id: string; permits: ReadonlySet<string> | 'any'; reads: PolicyReads | null } | null =
    null;
  let generation = 0;
  const cache = new Map<string, PolicyVerdict>();
  const cacheMax = opts.cacheSize ?? CACHE_MAX;
  // Made at the first decision, named by the engine's version and the schema: decisions made under another are not reused.
  let made: DecisionMemo | null | undefined;
  const memoOf = (): DecisionMemo | null =>
    (made ??= opts.memo ? new DecisionMemo(opts.memo, `${cedarVersion()}|${sha256(shipped().schema)}`) : null);
  const hashes = new Map<string, string>();
  const hashOf = (text: string): string => {
    let h = hashes.get(text);
    if (h === undefined) {
      if (hashes.size > 8) hashes.clear();
      h = sha256(text);
      hashes.set(text, h);
    }
    return h;
  };
  /** The narrowing of a policy the engine has not parsed in this process, from the memo's copy of its JSON form. */
  const memoReads = (text: string): PolicyReads | null | undefined => {
    const json = memoOf()?.jsonOf(hashOf(text));
    if (json === undefined) return undefined;
    return json && opts.narrow !== false ? readsOf(json) : null;
  };
  const keyOf = (whole: PolicyQuery, reads: PolicyReads | null): { q: PolicyQuery; facts: string; body: string } => {
    const q = reads ? narrowed(whole, reads) : whole;
    const classed = !!reads?.classes.size;
    // With classed tags the key is the classes, and the request's own text is needed only when Cedar is asked.
    const facts = classed ? '' : JSON.stringify([q.context, q.entities]);
    const body = `${q.action}\n${classed ? JSON.stringify([q.context, classedEntities(q.entities, reads!.classes)]) : facts}`;
    return { q, facts, body };
  };

  const cedar = (): Promise<Cedar> => {
    avoidJsToWasmInlining(); // before the module: Node 20's V8 can abort deoptimizing an inlined call into it
    loading ??= import('@cedar-policy/cedar-wasm/nodejs').then((m) => {
      const c = ((m as unknown as { default?: Cedar }).default ?? m) as Cedar;
      const s = c.preparseSchema(SCHEMA_NAME, shipped().schema);
      if (s.type !== 'success')
        throw new Error(`the policy schema does not parse: ${s.errors.map((e) => e.message).join('; ')}`);
      return c;
    });
    return loading;
  };

  /** Parsed, split by id and validated: the one gate every policy passes, whether checked, set or loaded. */
  const prepare = (c: Cedar, text: string): Record<string, string> => {
    const set = splitPolicies(c, text);
    const v = c.validate({
      schema: shipped().schema,
      policies: { staticPolicies: set },
      validationSettings: { mode: 'strict' },
    });
    const message = validationMessage(v);
    if (message) throw new GatehouseError('invalid_value', message);
    return set;
  };

  const activate = async (): Promise<{
    c: Cedar;
    text: string;
    id: string;
    permits: ReadonlySet<string> | 'any';
    reads: PolicyReads | null;
  }> => {
    let c: Cedar;
    try {
      c = await cedar();
    } catch (e) {
      throw new GatehouseError(
        'policy_unavailable',
        `the policy engine could not be loaded (${(e as Error).message}); calls are refused until it can`,
      );
    }
    const text = opts.activeText() ?? shipped().policy;
    if (active?.text === text) return { c, ...active };
    let set: Record<string, string>;
    try {
      set = prepare(c, text);
    } catch (e) {
      throw new GatehouseError(
        'policy_unavailable',
        `the stored policy cannot be used (${(e as Error).message}); calls are refused until a valid one is set (gatehouse policy set FILE)`,
      );
    }
    const id = `active-${++generation}`;
    const r = c.preparsePolicySet(id, { staticPolicies: set });
    if (r.type !== 'success')
      throw new GatehouseError(
        'policy_unavailable',
        `the policy could not be loaded: ${r.errors.map((e) => e.message).join('; ')}`,
      );
    const json = policiesAsJson(c, set);
    memoOf()?.adopt(hashOf(text), json);
    active = {
      text,
      id,
      permits: json ? permittedActions(json) : 'any',
      reads: json && opts.narrow !== false ? readsOf(json) : null,
    };
    cache.clear();
    return { c, ...active };
  };

  return {
    async decide(whole: PolicyQuery): Promise<PolicyVerdict> {
      const memo = memoOf();
      if (memo) {
        // Before the engine is loaded for this policy: a decision made before, in any process, needs none.
        const text = opts.activeText() ?? shipped().policy;
        if (active?.text !== text) {
          const reads = memoReads(text);
          if (reads !== undefined) {
            const known = memo.get(hashOf(text), keyOf(whole, reads).body);
            if (known) return known;
          }
        }
      }
      const { c, id, reads, text } = await activate();
      const { q, body, facts: known } = keyOf(whole, reads);
      let facts = known;
      const key = `${id}\n${body}`;
      const hit = cache.get(key);
      if (hit) return hit;
      // Cedar gets objects fresh from JSON.parse: handed the narrowed objects (built key by key) themselves, Node 20's V8
      // died in its deoptimizer ("unreachable code") in 4 of 6 benchmark runs; from JSON.parse, in none of 6 (decisions.md).
      facts ||= JSON.stringify([q.context, q.entities]);
      const [context, entities] = JSON.parse(facts) as [CedarWasm.Context, CedarWasm.Entities];
      const answer = c.statefulIsAuthorized({
        principal: q.principal,
        action: { type: 'Action', id: q.action },
        resource: q.resource,
        context,
        entities,
        preparsedPolicySetId: id,
        // The request is built by our own code (core/policy/policy.ts), to the schema the policy was validated against: checking it again costs ~0.1 ms a call.
        validateRequest: false,
      });
      if (answer.type !== 'success')
        throw new GatehouseError(
          'policy_unavailable',
          `the policy could not be evaluated: ${answer.errors
            .map((e) => e.message)
            .join('; ')
            .slice(0, 500)}`,
        );
      const { decision, diagnostics } = answer.response;
      const verdict: PolicyVerdict = {
        decision,
        policies: [...diagnostics.reason].sort(),
        errors: diagnostics.errors.map((e) => e.policyId),
      };
      memo?.put(hashOf(text), body, verdict);
      if (cacheMax <= 0) return verdict;
      if (cache.size >= cacheMax) cache.delete(cache.keys().next().value!);
      cache.set(key, verdict);
      return verdict;
    },
    async mayPermit(action: PolicyAction): Promise<boolean> {
      const text = opts.activeText() ?? shipped().policy;
      const json = active?.text !== text ? memoOf()?.jsonOf(hashOf(text)) : undefined;
      const permits = json !== undefined ? (json ? permittedActions(json) : 'any') : (await activate()).permits;
      return permits === 'any' || permits.has(action);
    },
    loaded: () => loading !== null,
    /** resolves once the memo holds on disk what was decided so far */
    settled: () => made?.settled() ?? Promise.resolve(),
    async check(text: string): Promise<PolicyCheckAnswer> {
      const c = await cedar();
      return { policies: Object.keys(prepare(c, text)) };
    },
    defaultText: () => shipped().policy,
    schemaText: () => shipped().schema,
  };
}

/** Each policy of the set in Cedar's JSON form; null when one cannot be read (then nothing is narrowed or skipped). */
function policiesAsJson(c: Cedar, set: Record<string, string>): CedarWasm.PolicyJson[] | null {
  const out: CedarWasm.PolicyJson[] = [];
  for (const text of Object.values(set)) {
    const json = c.policyToJson(text);
    if (json.type !== 'success') return null;
    out.push(json.json);
  }
  return out;
}

/** The actions some `permit` of the set names (its action scope); 'any' when one applies to every action. */
function permittedActions(policies: CedarWasm.PolicyJson[]): ReadonlySet<string> | 'any' {
  const named = new Set<string>();
  for (const p of policies) {
    if (p.effect !== 'permit') continue;
    const scope = p.action;
    if (scope.op === 'All') return 'any';
    if ('entity' in scope) named.add(uidOf(scope.entity));
    else if ('entities' in scope) for (const e of scope.entities) named.add(uidOf(e));
    else return 'any';
  }
  return named;
}

const uidOf = (e: CedarWasm.EntityUidJson): string => ('__entity' in e ? e.__entity.id : e.id);

/** The engine's version, from its package (a memo made by another engine is not used); 'unknown' when unreadable. */
function cedarVersion(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(join(PACKAGE_ROOT, 'node_modules', '@cedar-policy', 'cedar-wasm', 'package.json'), 'utf8'),
    ) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
