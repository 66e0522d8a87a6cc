import type { AuditEntry, AuditPage, AuditQuery, AuditQueryInput, AuditResult } from '../../contract/audit.ts';
import type { Entitlement } from '../../contract/entitlements.ts';
import type { VaultBackend } from '../../contract/health.ts';
import type { UsageEvent } from '../../contract/usage.ts';

/**
 * A JSON document kept in memory and persisted by an adapter. Reads are
 * synchronous snapshots; updates are serialized, validated and written
 * atomically before the returned promise resolves. A mutation changes the
 * draft synchronously: one that returns a promise is refused.
 */
export interface DocumentStore<T> {
  read(): T;
  update<R>(mutate: (draft: T) => R): Promise<R>;
}

/** Secrets: the OS keychain, or a 0600 file when no keychain is reachable. */
export interface Vault {
  readonly backend: VaultBackend;
  get(account: string): Promise<string | null>;
  set(account: string, secret: string): Promise<void>;
  delete(account: string): Promise<boolean>;
}

/**
 * Where `tokens.create` with a keychain account saves the client's token:
 * the vault, confined to the namespace clients may write (the adapter,
 * main/store/vault-account.ts, is the one place that knows account names).
 */
export interface ClientTokenVault {
  readonly backend: VaultBackend;
  /** saves under the client account for `name`; returns nothing a caller could use to name another account */
  save(name: string, token: string): Promise<void>;
}

export interface AuditSink {
  append(entry: AuditEntry): void;
  /** Resolves once every entry appended so far is durable (written and fsynced). */
  sync(): Promise<void>;
}
/** Looks up one transition of a staged write in the audit log (crash recovery). */
export interface AuditTrail {
  /** Whether an entry with this staged id and result was written at or after `sinceMs` (give or take clock steps). */
  hasStagedEntry(stagedId: string, result: AuditResult, sinceMs: number): Promise<boolean>;
}
export interface AuditReader {
  query(q: AuditQuery): Promise<AuditPage>;
  /** every entry matching the filters, oldest first, written to `out`; resolves with the count */
  export(
    q: Omit<AuditQueryInput, 'limit' | 'cursor'>,
    format: 'jsonl' | 'csv',
    out: NodeJS.WritableStream,
  ): Promise<number>;
}

/** Feature gates ask this: the cloud client's entitlements (its verified certificate, the local free plan as the floor). */
export interface EntitlementSource {
  check(feature: string): Promise<Entitlement>;
  /** the answer with why a refused feature is refused (the cloud client's certificate knows: product switched off, license expired or revoked) */
  decide?(feature: string): Promise<{
    entitlement: Entitlement;
    code: 'entitlement_required' | 'product_inactive' | 'license_expired' | 'license_invalid' | null;
  }>;
}

/**
 * Where usage events go once made (event_id and timestamp set): the local
 * counters and the cloud client's persistent outbox. Must not throw
 * for a well-formed event and must not block: it is called on the call path.
 */
/** A usage event as its recorder made it: id and time are the recorder's; the site is the sink's to say. */
export type RecordedUsage = Omit<UsageEvent, 'site_id'>;

export interface UsageSink {
  record(event: RecordedUsage): void;
}

/** A text-generating AI provider (the cloud gateway's `ai/generate`, main/cloud-client/cloud-ai.ts). */
export interface AiProvider {
  readonly id: string;
  generate(
    req: { system?: string; prompt: string; model?: string; max_tokens?: number },
    signal?: AbortSignal,
  ): Promise<{ text: string; model: string; tokens_input: number; tokens_output: number }>;
}
export interface AiProviderSource {
  /** null when none is configured */
  current(): AiProvider | null;
  /** one sentence telling a person how to configure one */
  readonly howToConfigure: string;
}
