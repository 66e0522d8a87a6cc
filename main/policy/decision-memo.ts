import { createHash } from 'node:crypto';
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import type { PolicyVerdict } from '../core/policy/policy.ts';
import { OneQueued } from '../lib/one-queued.ts';

/**
 * Decisions kept across processes (`policy-memo.json` in the data dir), so a command that asks the policy what
 * it asked before (`gatehouse staged list` marking the writes a policy now forbids) answers without loading the
 * ~4 MB engine. Sound because a Cedar decision is a function of the policy, the schema and the request alone:
 * a memo holds one policy's decisions, keyed by the request as the engine narrows it (the same key as its
 * in-process memory, hashed), with that policy's JSON form so the narrowing needs no engine. It is only a cache:
 * another policy, schema or engine, a file that does not parse or does not fit, and it is ignored (the engine
 * loads and answers); the person's policy in options.json stays the one truth. Bounded like the engine's memory.
 */

/** Where the memo lives: the adapter (main/store/policy-memo-file.ts) reads it once and writes it atomically. */
export interface DecisionMemoStore {
  read(): unknown;
  write(doc: unknown): Promise<void>;
}

const FORMAT = 1;
const MAX_DECISIONS = 2000;

type Stored = [key: string, decision: 'allow' | 'deny', policies: string[], errors: string[]];

interface MemoDoc {
  v: typeof FORMAT;
  /** the engine and schema the decisions were made with */
  engine: string;
  /** sha256 of the policy text */
  policy: string;
  json: CedarWasm.PolicyJson[] | null;
  decisions: Stored[];
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function parsed(raw: unknown, engine: string): MemoDoc | null {
  if (!raw || typeof raw !== 'object') return null;
  const d = raw as Partial<MemoDoc>;
  if (d.v !== FORMAT || d.engine !== engine || typeof d.policy !== 'string') return null;
  if (d.json !== null && !Array.isArray(d.json)) return null;
  if (!Array.isArray(d.decisions) || d.decisions.length > MAX_DECISIONS) return null;
  for (const s of d.decisions)
    if (
      !Array.isArray(s) ||
      typeof s[0] !== 'string' ||
      (s[1] !== 'allow' && s[1] !== 'deny') ||
      !strings(s[2]) ||
      !strings(s[3])
    )
      return null;
  return d as MemoDoc;
}

export class DecisionMemo {
  private doc: MemoDoc | null | undefined;
  private decisions = new Map<string, PolicyVerdict>();
  // Written at once, a burst coalesced into one more write (no timer: a short CLI command still saves what it
  // learned before it exits); a write that fails (a full disk) costs the next process an engine load, nothing else.
  private readonly writer = new OneQueued(async () => {
    const doc = this.doc;
    if (!doc) return;
    const decisions: Stored[] = [...this.decisions].map(([k, v]) => [k, v.decision, v.policies, v.errors]);
    await this.store.write({ ...doc, decisions }).catch(() => undefined);
  });

  constructor(
    private readonly store: DecisionMemoStore,
    /** names the engine and schema: a memo made by another is not used */
    private readonly engine: string,
  ) {}

  /** The memo of this policy text, read from the store once; null when there is none for it. */
  private forText(policyHash: string): MemoDoc | null {
    if (this.doc === undefined) {
      let raw: unknown;
      try {
        raw = this.store.read();
      } catch {
        raw = null;
      }
      this.doc = parsed(raw, this.engine);
      this.decisions = new Map(
        (this.doc?.decisions ?? []).map(([k, decision, policies, errors]) => [k, { decision, policies, errors }]),
      );
    }
    return this.doc?.policy === policyHash ? this.doc : null;
  }

  /** The policy's JSON form as the memo keeps it; undefined when the memo is not this policy's. */
  jsonOf(policyHash: string): CedarWasm.PolicyJson[] | null | undefined {
    const d = this.forText(policyHash);
    return d ? d.json : undefined;
  }

  get(policyHash: string, key: string): PolicyVerdict | undefined {
    return this.forText(policyHash) ? this.decisions.get(sha256(key)) : undefined;
  }

  /** The engine parsed this policy: the memo is now this policy's (a new policy starts an empty one). */
  adopt(policyHash: string, json: CedarWasm.PolicyJson[] | null): void {
    if (this.forText(policyHash)) return;
    this.doc = { v: FORMAT, engine: this.engine, policy: policyHash, json, decisions: [] };
    this.decisions = new Map();
    this.writeSoon();
  }

  put(policyHash: string, key: string, verdict: PolicyVerdict): void {
    if (!this.forText(policyHash)) return;
    const k = sha256(key);
    if (this.decisions.has(k)) return;
    if (this.decisions.size >= MAX_DECISIONS) this.decisions.delete(this.decisions.keys().next().value!);
    this.decisions.set(k, verdict);
    this.writeSoon();
  }

  private writeSoon(): void {
    void this.writer.kick();
  }

  /** Resolves once what is known now is written (tests). */
  settled(): Promise<void> {
    return this.writer.settled();
  }
}
