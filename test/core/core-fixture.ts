import { z } from 'zod';
import { RESOURCE_READ, type AuditEntry } from '../../main/contract/audit.ts';
import { SETTINGS_DEFAULTS, type Settings } from '../../main/contract/settings.ts';
import type { TokenRecord, TokenScope } from '../../main/contract/tokens.ts';
import type { UsageEvent } from '../../main/contract/usage.ts';
import { ROLE_CAPABILITIES, type Role, type User } from '../../main/contract/users.ts';
import { Auditor } from '../../main/core/auditor.ts';
import { EventHub } from '../../main/core/events.ts';
import { LocalEntitlements } from '../../main/core/local-entitlements.ts';
import { OptionsData, emptyOptions } from '../../main/core/options-data.ts';
import { Pipeline } from '../../main/core/pipeline.ts';
import { MemoryStagedStore } from '../../main/core/staged-store.ts';
import { Registry } from '../../main/core/registry.ts';
import { Staging } from '../../main/core/staging.ts';
import { StatsRecorder } from '../../main/core/stats.ts';
import { defineTool, type CallContext, type Plugin, type PluginHost, type Tool } from '../../main/core/tool.ts';
import { UsageRecorder } from '../../main/core/usage.ts';
import { jsonSchemaCompiler } from '../../main/mcp/json-schema.ts';
import { MemoryStore } from '../helpers/memory-store.ts';

export const T0 = Date.parse('2026-05-04T10:00:00.000Z');

export class TestClock {
  constructor(public t = T0) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export const userOf = (role: Role): User => ({ id: `usr_${role}`, login: role === 'administrator' ? 'admin' : role, display_name: role, role, created: new Date(T0).toISOString() });

export function ctxFor(role: Role, scope: Partial<TokenScope> | null = null, signal?: AbortSignal): CallContext {
  const token: TokenRecord | null = scope
    ? { id: `tok_${role}`, label: role, hash: '0'.repeat(64), user_id: `usr_${role}`, preview: 'gth_…test', created: new Date(T0).toISOString(), last_used: null, scope: { read_only: false, ...scope } }
    : null;
  return { user: userOf(role), capabilities: new Set(ROLE_CAPABILITIES[role]), token, request_id: `req_${role}`, client: 'core-test', ...(signal ? { signal } : {}) };
}

/** A plugin whose tools tests change while it runs, through the host the registry gives it. */
export function runtimePlugin(id = 'runtime', initial: Tool[] = []) {
  let host: PluginHost | null = null;
  const calls: string[] = [];
  let signal: AbortSignal | null = null;
  const plugin: Plugin = {
    id,
    title: `Plugin ${id}`,
    kind: 'upstream',
    tools: () => initial,
    async start(h, s) {
      host = h;
      signal = s;
      calls.push('start');
    },
    async stop() {
      calls.push('stop');
    },
  };
  return {
    plugin,
    calls,
    get host(): PluginHost {
      if (!host) throw new Error('plugin not started');
      return host;
    },
    get signal() {
      return signal;
    },
  };
}

/** A read tool that echoes its input. */
export const echoTool = (name: string, plugin = 'runtime', over: Partial<Tool> = {}): Tool =>
  ({
    ...defineTool({
      name, title: `Echo ${name}`, description: 'echoes its input', plugin, capability: 'read', feature: 'mcp.core', write: false,
      input: z.object({ text: z.string().max(50).default('hi') }),
      run: async (input) => ({ structured: { echoed: input.text } }),
    }),
    ...over,
  }) as Tool;

/** The whole core over an in-memory store: what the gateway wires, minus files and sockets. */
export function openCore(settings: Partial<Settings> = {}) {
  const store = new MemoryStore(
    { ...emptyOptions(), settings: { ...SETTINGS_DEFAULTS, ...settings }, users: (['administrator', 'editor', 'author', 'contributor', 'subscriber'] as const).map(userOf) },
    OptionsData,
  );
  const clock = new TestClock();
  const events = new EventHub();
  const audit: AuditEntry[] = [];
  const usageEvents: UsageEvent[] = [];
  const registry = new Registry(jsonSchemaCompiler);
  const stats = new StatsRecorder(store, clock, (name) => registry.has(name) || name === RESOURCE_READ);
  const usage = new UsageRecorder({ record: (e) => { usageEvents.push(e); stats.record(e); } }, clock, () => 'site_test');
  const auditor = new Auditor({ append: (e) => void audit.push(e), sync: async () => {} }, stats, clock, () => 'https://site.test/');
  const staging = new Staging({
    store: new MemoryStagedStore(), users: (id) => store.read().users.find((u) => u.id === id), registry, auditor, events, clock, usage,
    auditTrail: { hasStagedEntry: async (id, result) => audit.some((e) => e.staged_id === id && e.result === result) },
  });
  const entitlements = new LocalEntitlements('free');
  const pipeline = new Pipeline({ registry, staging, auditor, entitlements: () => entitlements, settings: () => store.read().settings, clock, usage, timeoutMs: 5_000 });
  return {
    store, clock, events, audit, usageEvents, registry, stats, usage, auditor, staging, pipeline,
    setSettings: (patch: Partial<Settings>) => store.update((d) => void Object.assign(d.settings, patch)),
    lastAudit: () => audit[audit.length - 1]!,
  };
}
