import { AuditQuery, type AuditEntry, type AuditPage, type AuditQueryInput } from '../../main/contract/audit.ts';
import type { Principal } from '../../main/contract/principal.ts';
import { ROLE_CAPABILITIES, type Role, type User } from '../../main/contract/users.ts';
import type { AuditReader, AuditSink, Vault } from '../../main/core/ports.ts';
import type { CallContext } from '../../main/core/tool.ts';
import { MemoryStore } from '../../main/core/memory-store.ts';
import { OptionsData } from '../../main/core/options-data.ts';
import { EventHub } from '../../main/core/events.ts';
import { SettingsService } from '../../main/core/settings-service.ts';
import { Users } from '../../main/core/users.ts';
import { Tokens } from '../../main/core/tokens.ts';
import { Registry } from '../../main/core/registry.ts';
import { StatsRecorder } from '../../main/core/stats.ts';
import { Auditor } from '../../main/core/auditor.ts';
import { Staging } from '../../main/core/staging.ts';
import { Pipeline } from '../../main/core/pipeline.ts';
import { LocalEntitlements } from '../../main/core/local-entitlements.ts';
import { ConsoleSessions } from '../../main/core/console-sessions.ts';
import { createInvoke } from '../../main/core/invoke.ts';
import { builtinPlugin } from '../../main/mcp/builtin-tools.ts';
import { createSitePlugin, emptySiteData, SiteData } from '../../main/plugins/site/index.ts';
import { clientTokenVault } from '../../main/store/vault-account.ts';
import { entryToCsvRow, entryToJsonLine, CSV_HEADER } from '../../main/store/audit-export-format.ts';
import { NO_AI, NOT_CONNECTED } from '../../main/gateway.ts';
import { TestClock } from './service.ts';
import { VERSION } from '../../main/version.ts';

/** Audit entries in memory: appended in order, queried newest first with an offset cursor. */
export class MemoryAudit implements AuditSink, AuditReader {
  readonly entries: AuditEntry[] = [];

  append(entry: AuditEntry): void {
    this.entries.push(entry);
  }

  async query(q: AuditQuery): Promise<AuditPage> {
    const all = this.matching(q).reverse();
    const start = Number(q.cursor ?? 0) || 0;
    const page = all.slice(start, start + q.limit);
    return { entries: page, next_cursor: start + q.limit < all.length ? String(start + q.limit) : null };
  }

  async export(q: Omit<AuditQueryInput, 'limit' | 'cursor'>, format: 'jsonl' | 'csv', out: NodeJS.WritableStream): Promise<number> {
    const entries = this.matching(AuditQuery.parse(q));
    if (format === 'csv') out.write(CSV_HEADER);
    for (const e of entries) out.write(format === 'csv' ? entryToCsvRow(e) : `${entryToJsonLine(e)}\n`);
    return entries.length;
  }

  private matching(q: Omit<AuditQuery, 'limit' | 'cursor'>): AuditEntry[] {
    return this.entries.filter(
      (e) =>
        (!q.tool || e.tool === q.tool) && (!q.result || e.result === q.result) && (!q.user_id || e.user_id === q.user_id) &&
        (!q.token_id || e.token_id === q.token_id) && (!q.plugin || e.source_plugin === q.plugin) && (!q.from || e.at >= q.from) && (!q.to || e.at < q.to),
    );
  }
}

/** A vault in memory; `accounts` shows what was written where. */
export class MemoryVault implements Vault {
  readonly backend = 'file' as const;
  readonly accounts = new Map<string, string>();
  async get(account: string) {
    return this.accounts.get(account) ?? null;
  }
  async set(account: string, secret: string) {
    this.accounts.set(account, secret);
  }
  async delete(account: string) {
    return this.accounts.delete(account);
  }
}

/**
 * The real core (users, tokens, registry with the built-in and site plugins,
 * staging, the pipeline and invoke) over in-memory stores, a memory vault and
 * a memory audit: no files, no sockets, a clock the test moves.
 */
export async function openCore(opts: { consoleUrl?: string | null } = {}) {
  const clock = new TestClock(Date.parse('2026-11-22T08:00:00Z'));
  const options = new MemoryStore(OptionsData);
  const siteStore = new MemoryStore(SiteData, emptySiteData());
  const events = new EventHub();
  const settings = new SettingsService(options, events);
  const audit = new MemoryAudit();
  const vault = new MemoryVault();
  const users = new Users(options, clock);
  const admin = await users.ensureAdmin();
  const tokens = new Tokens(options, clock);
  const registry = new Registry();
  const stats = new StatsRecorder(options, clock);
  const site = createSitePlugin({ store: siteStore, clock, ai: NO_AI, adminUserId: admin.id });
  await site.seedIfEmpty();
  const auditor = new Auditor(audit, stats, clock, () => 'local');
  const staging = new Staging(options, registry, auditor, events, clock, () => settings.get());
  const entitlements = new LocalEntitlements('free');
  const pipeline = new Pipeline(registry, staging, auditor, () => entitlements, () => settings.get(), clock);
  registry.add(builtinPlugin({ registry, staging, settings: () => settings.get(), siteIdentity: () => site.identity() as unknown as Record<string, unknown> }));
  registry.add(site);
  const sessions = new ConsoleSessions(clock);
  const consoleUrl = opts.consoleUrl === undefined ? 'http://127.0.0.1:7823/console/' : opts.consoleUrl;
  const invoke = createInvoke({
    users, tokens, staging, registry, settings, stats, audit, events, sessions, clock,
    clientVault: clientTokenVault(vault),
    health: () => ({
      name: 'gatehouse', version: VERSION, enabled: settings.get().enabled, base_url: '', mcp_url: '', console_url: consoleUrl ?? '', data_dir: '(memory)',
      vault: { backend: 'file', label: 'memory' }, pending_approvals: staging.pendingCount(), recent_clients: [], cloud: NOT_CONNECTED, warnings: [],
    }),
    consoleUrl: () => consoleUrl,
    cloud: () => NOT_CONNECTED,
    entitlements: () => entitlements,
  });

  /** A user with this role (created once per login) and a client token for it. */
  async function tokenFor(login: string, role: Role, scope: { read_only?: boolean; tools?: string[]; plugins?: string[] } = {}) {
    const user: User = users.byLogin(login) ?? (await users.add(login, role));
    const created = await tokens.create(`${login} agent`, user, scope);
    const record = options.read().tokens.find((t) => t.id === created.record.id)!;
    return { user, token: created.token, record };
  }

  /** The call context an MCP request with this token would get, read now (role and scope as they are). */
  function ctxOf(tokenId: string, request_id = 'req-test'): CallContext {
    const record = options.read().tokens.find((t) => t.id === tokenId)!;
    const user = users.byId(record.user_id)!;
    return { user, capabilities: new Set(ROLE_CAPABILITIES[user.role]), token: record, request_id, client: 'test-agent' };
  }

  /** The principal of a client token over the local REST. */
  function restPrincipal(tokenId: string): Principal {
    const ctx = ctxOf(tokenId);
    return { kind: 'token', surface: 'rest', token_id: ctx.token!.id, token_preview: ctx.token!.preview, user_id: ctx.user.id, login: ctx.user.login };
  }

  return { clock, options, siteStore, events, settings, audit, vault, users, admin, tokens, registry, stats, auditor, staging, pipeline, site, sessions, invoke, tokenFor, ctxOf, restPrincipal };
}
export type Core = Awaited<ReturnType<typeof openCore>>;
