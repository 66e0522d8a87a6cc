import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import type { PolicyCheckAnswer } from '../contract/policy.ts';
import type { EntityJson, PolicyAction, PolicyEngine, PolicyQuery, PolicyVerdict } from '../core/policy/policy.ts';
import { GatehouseError } from '../core/errors.ts';
import { avoidJsToWasmInlining } from '../lib/wasm-jit-guard.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { splitPolicies, validationMessage } from './cedar-text.ts';
import { narrowed, readsOf, type PolicyReads } from './policy-reads.ts';
import { classedEntities } from './tag-classes.ts';
import { DecisionMemo, sha256, type DecisionMemoStore } from './decision-memo.ts';

type Cedar = typeof CedarWasm;

/** The CommonJS build loaded as an ES module: Node hands its exports over as `default` (and named ones beside it). */
const withDefault = (m: Cedar | { default: Cedar }): m is { default: Cedar } =>
  'default' in m && typeof m.default === 'object' && m.default !== null;

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
export function createCedarEngine(opts: CedarEngineOptions): PolicyEngine & {
  loaded(): boolean;
  settled(): Promise<void>;
} {
  const e = new CedarEngine(opts);
  return {
    decide: (q) => e.decide(q),
    mayList: (q) => e.mayList(q),
    mayPermit: (action) => e.mayPermit(action),
    loaded: () => e.loaded(),
    /** resolves once the memo holds on disk what was decided so far */
    settled: () => e.settled(),
    check: (text) => e.check(text),
    defaultText: () => e.shipped().policy,
    schemaText: () => e.shipped().schema,
  };
}

export interface CedarEngineOptions {
  activeText: () => string | null;
  dir?: string;
  cacheSize?: number;
  narrow?: boolean;
  /** decisions kept across processes (decision-memo.ts): the data dir's, in the service and the CLI */
  memo?: DecisionMemoStore;
}

/** The active policy as Cedar holds it (preparsed under `id`), with what it permits and reads. */
interface ActivePolicy {
  text: string;
  id: string;
  set: Record<string, string>;
  permits: ReadonlySet<string> | 'any';
  reads: PolicyReads | null;
}

class CedarEngine {
  private readonly dir: string;
  private files: { policy: string; schema: string } | null = null;
  private loading: Promise<Cedar> | null = null;
  private active: ActivePolicy | null = null;
  private generation = 0;
  private readonly cache = new Map<string, PolicyVerdict>();
  private readonly listings = new Map<string, boolean>();
  private readonly cacheMax: number;
  // Made at the first decision, named by the engine's version and the schema: decisions made under another are not reused.
  private made: DecisionMemo | null | undefined;
  private readonly hashes = new Map<string, string>();
  private lastCheck: { text: string; policies: string[] } | { text: string; refused: unknown } | null = null;

  constructor(private readonly opts: CedarEngineOptions) {
    this.dir = opts.dir ?? POLICY_DIR;
    this.cacheMax = opts.cacheSize ?? CACHE_MAX;
  }

  shipped(): { policy: string; schema: string } {
    return (this.files ??= {
      policy: readFileSync(join(this.dir, 'default.cedar'), 'utf8'),
      schema: readFileSync(join(this.dir, 'gatehouse.cedarschema'), 'utf8'),
    });
  }

  loaded(): boolean {
    return this.loading !== null;
  }

  settled(): Promise<void> {
    return this.made?.settled() ?? Promise.resolve();
  }

  /**
   * The policy's statements, or why it cannot be used. The console's policy screen and `policy show` ask about the
   * same text at every view, and Cedar's validation of it was most of that answer (15-25 ms of `policy.get`'s
   * 17-27 ms, docs/performance.md): the last text's answer is kept. It depends only on the text, since the schema is
   * the shipped one; an engine that failed to load is not an answer about the text, so it is not kept.
   */
  async check(text: string): Promise<PolicyCheckAnswer> {
    const last = this.lastCheck;
    if (last?.text === text) {
      if ('refused' in last) throw last.refused;
      return { policies: [...last.policies] };
    }
    const c = await this.cedar();
    try {
      const policies = Object.keys(this.prepare(c, text));
      this.lastCheck = { text, policies };
      return { policies: [...policies] };
    } catch (e) {
      this.lastCheck = { text, refused: e };
      throw e;
    }
  }

  async decide(whole: PolicyQuery): Promise<PolicyVerdict> {
    const remembered = this.remembered(whole);
    if (remembered) return remembered;
    const { c, id, reads, text } = await this.activate();
    const { q, body, facts } = this.keyOf(whole, reads);
    const key = `${id}\n${body}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const verdict = authorized(c, id, q, facts);
    this.memoOf()?.put(this.hashOf(text), body, verdict);
    return keep(this.cache, this.cacheMax, key, verdict);
  }

  async mayList(whole: PolicyQuery): Promise<boolean> {
    const { c, id, set, reads } = await this.activate();
    // A call with no arguments permitted: some call is. And a policy that reads nothing of the call itself answers
    // every call of this tool by this caller alike. Both are the cached decision, as a tools/call's.
    const plain = await this.decide(whole);
    if (plain.decision === 'allow' || (reads && !readsCallFacts(reads))) return plain.decision === 'allow';
    const q = reads ? narrowed(whole, reads) : whole;
    const facts = JSON.stringify([q.context, q.entities]);
    const key = `${id}\n${q.action}\n${facts}`;
    const hit = this.listings.get(key);
    if (hit !== undefined) return hit;
    return keep(this.listings, this.cacheMax, key, mayPermitSomeCall(c, set, q, facts));
  }

  async mayPermit(action: PolicyAction): Promise<boolean> {
    const text = this.activeText();
    const json = this.active?.text !== text ? this.memoOf()?.jsonOf(this.hashOf(text)) : undefined;
    const permits = json !== undefined ? (json ? permittedActions(json) : 'any') : (await this.activate()).permits;
    return permits === 'any' || permits.has(action);
  }

  private activeText(): string {
    return this.opts.activeText() ?? this.shipped().policy;
  }

  private memoOf(): DecisionMemo | null {
    return (this.made ??= this.opts.memo
      ? new DecisionMemo(this.opts.memo, `${cedarVersion()}|${sha256(this.shipped().schema)}`)
      : null);
  }

  private hashOf(text: string): string {
    let h = this.hashes.get(text);
    if (h === undefined) {
      if (this.hashes.size > 8) this.hashes.clear();
      h = sha256(text);
      this.hashes.set(text, h);
    }
    return h;
  }

  /** Before the engine is loaded for this policy: a decision made before, in any process, needs none. */
  private remembered(whole: PolicyQuery): PolicyVerdict | null {
    const memo = this.memoOf();
    if (!memo) return null;
    const text = this.activeText();
    if (this.active?.text === text) return null;
    const reads = this.memoReads(text);
    if (reads === undefined) return null;
    return memo.get(this.hashOf(text), this.keyOf(whole, reads).body) ?? null;
  }

  /** The narrowing of a policy the engine has not parsed in this process, from the memo's copy of its JSON form. */
  private memoReads(text: string): PolicyReads | null | undefined {
    const json = this.memoOf()?.jsonOf(this.hashOf(text));
    if (json === undefined) return undefined;
    return json && this.opts.narrow !== false ? readsOf(json) : null;
  }

  private keyOf(whole: PolicyQuery, reads: PolicyReads | null): { q: PolicyQuery; facts: string; body: string } {
    const q = reads ? narrowed(whole, reads) : whole;
    const classed = !!reads?.classes.size;
    // With classed tags the key is the classes, and the request's own text is needed only when Cedar is asked.
    const facts = classed ? '' : JSON.stringify([q.context, q.entities]);
    const body = `${q.action}\n${classed ? JSON.stringify([q.context, classedEntities(q.entities, reads!.classes)]) : facts}`;
    return { q, facts, body };
  }

  private cedar(): Promise<Cedar> {
    avoidJsToWasmInlining(); // before the module: Node 20's V8 can abort deoptimizing an inlined call into it
    this.loading ??= import('@cedar-policy/cedar-wasm/nodejs').then((m) => {
      const c: Cedar = withDefault(m) ? m.default : m;
      const s = c.preparseSchema(SCHEMA_NAME, this.shipped().schema);
      if (s.type !== 'success')
        throw new Error(`the policy schema does not parse: ${s.errors.map((e) => e.message).join('; ')}`);
      return c;
    });
    return this.loading;
  }

  /** Parsed, split by id and validated: the one gate every policy passes, whether checked, set or loaded. */
  private prepare(c: Cedar, text: string): Record<string, string> {
    const set = splitPolicies(c, text);
    const v = c.validate({
      schema: this.shipped().schema,
      policies: { staticPolicies: set },
      validationSettings: { mode: 'strict' },
    });
    const message = validationMessage(v);
    if (message) throw new GatehouseError('invalid_value', message);
    return set;
  }

  /** The engine loaded and the active policy preparsed: again only when its text changed. */
  private async activate(): Promise<ActivePolicy & { c: Cedar }> {
    let c: Cedar;
    try {
      c = await this.cedar();
    } catch (e) {
      throw new GatehouseError(
        'policy_unavailable',
        `the policy engine could not be loaded (${(e as Error).message}); calls are refused until it can`,
      );
    }
    const text = this.activeText();
    if (this.active?.text !== text) this.adopt(c, text);
    return { c, ...this.active! };
  }

  /** A new active policy: validated, preparsed under a new id, its narrowing read; what the old one decided is dropped. */
  private adopt(c: Cedar, text: string): void {
    let set: Record<string, string>;
    try {
      set = this.prepare(c, text);
    } catch (e) {
      throw new GatehouseError(
        'policy_unavailable',
        `the stored policy cannot be used (${(e as Error).message}); calls are refused until a valid one is set (gatehouse policy set FILE)`,
      );
    }
    const id = `active-${++this.generation}`;
    const r = c.preparsePolicySet(id, { staticPolicies: set });
    if (r.type !== 'success')
      throw new GatehouseError(
        'policy_unavailable',
        `the policy could not be loaded: ${r.errors.map((e) => e.message).join('; ')}`,
      );
    const json = policiesAsJson(c, set);
    this.memoOf()?.adopt(this.hashOf(text), json);
    this.active = {
      text,
      id,
      set,
      permits: json ? permittedActions(json) : 'any',
      reads: json && this.opts.narrow !== false ? readsOf(json) : null,
    };
    this.cache.clear();
    this.listings.clear();
  }
}

/** Kept at most `max` (the oldest dropped first; none when `max` is 0), and answered. */
function keep<T>(cache: Map<string, T>, max: number, key: string, value: T): T {
  if (max <= 0) return value;
  if (cache.size >= max) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
  return value;
}

function evaluationFailed(errors: Array<{ message: string }>): GatehouseError {
  return new GatehouseError(
    'policy_unavailable',
    `the policy could not be evaluated: ${errors
      .map((e) => e.message)
      .join('; ')
      .slice(0, 500)}`,
  );
}

/** Cedar's decision of one request, under the preparsed policy set `id`; `known` is the request's facts when the key has them. */
function authorized(c: Cedar, id: string, q: PolicyQuery, known: string): PolicyVerdict {
  // Cedar gets objects fresh from JSON.parse: handed the narrowed objects (built key by key) themselves, Node 20's V8
  // died in its deoptimizer ("unreachable code") in 4 of 6 benchmark runs; from JSON.parse, in none of 6 (decisions.md).
  const facts = known || JSON.stringify([q.context, q.entities]);
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
  if (answer.type !== 'success') throw evaluationFailed(answer.errors);
  const { decision, diagnostics } = answer.response;
  return {
    decision,
    policies: [...diagnostics.reason].sort(),
    errors: diagnostics.errors.map((e) => e.policyId),
  };
}

/** The call's own facts unknown: Cedar's partial evaluation answers deny only when no arguments, target or time could permit it. */
function mayPermitSomeCall(c: Cedar, set: Record<string, string>, q: PolicyQuery, facts: string): boolean {
  const [context, entities] = JSON.parse(facts) as [Record<string, unknown>, EntityJson[]];
  for (const k of CALL_CONTEXT) if (k in context) context[k] = unknown(k);
  for (const e of entities)
    if (e.uid.type === q.resource.type && 'target' in e.attrs) e.attrs.target = unknown('target');
  const answer = c.isAuthorizedPartial({
    principal: q.principal,
    action: { type: 'Action', id: q.action },
    resource: q.resource,
    context: context as CedarWasm.Context,
    entities: entities as CedarWasm.Entities,
    policies: { staticPolicies: set },
  });
  if (answer.type !== 'residuals') throw evaluationFailed(answer.errors);
  return answer.response.decision !== 'deny';
}

/** The context's facts of one call (what tools/list cannot know); the approval mode is the caller's. */
const CALL_CONTEXT = ['arg_names', 'secret_kinds', 'args', 'arg_lists', 'time'] as const;

/** Cedar's unknown value, for partial evaluation. */
const unknown = (name: string) => ({ __extn: { fn: 'unknown', arg: name } });

/** Whether the policy can read any fact of the call itself: the context's call facts, or the tool's target. */
function readsCallFacts(reads: PolicyReads): boolean {
  return reads.wholeContext || reads.names.has('target') || CALL_CONTEXT.some((k) => reads.names.has(k));
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
