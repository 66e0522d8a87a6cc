import { z } from 'zod';
import type { AuditEntry, AuditResult } from '../../main/contract/audit.ts';
import type { User } from '../../main/contract/users.ts';
import { Auditor } from '../../main/core/auditor.ts';
import { EventHub } from '../../main/core/events.ts';
import { emptyOptions, type OptionsData } from '../../main/core/options-data.ts';
import type { AuditSink, AuditTrail, DocumentStore } from '../../main/core/ports.ts';
import { Registry } from '../../main/core/registry.ts';
import { MemoryStagedStore } from '../../main/core/staged-store.ts';
import type { StagingLimits } from '../../main/core/staged-index.ts';
import { Staging } from '../../main/core/staging.ts';
import { StatsRecorder } from '../../main/core/stats.ts';
import { defineTool, type AppliedState, type CallContext, type Plugin, type StagedRef, type ToolOutput } from '../../main/core/tool.ts';
import { capabilitiesOf } from '../../main/core/users.ts';

/**
 * The pure core on in-memory adapters: a document store, an audit sink that
 * knows which entries were synced (a "crash" drops the rest), a staged store,
 * and a small "notes" plugin whose write tool applies idempotently by staged
 * id, like the site plugin does, and can be made to stop mid-apply.
 */

export class MemoryDocumentStore<T> implements DocumentStore<T> {
  constructor(private data: T) {}
  read(): T {
    return this.data;
  }
  async update<R>(mutate: (draft: T) => R | Promise<R>): Promise<R> {
    const draft = structuredClone(this.data);
    const r = await mutate(draft);
    this.data = draft;
    return r;
  }
}

export class MemoryAudit implements AuditSink, AuditTrail {
  entries: AuditEntry[] = [];
  private synced = 0;
  failNextSync: Error | null = null;
  append(e: AuditEntry): void {
    this.entries.push(e);
  }
  async sync(): Promise<void> {
    await Promise.resolve();
    if (this.failNextSync) {
      const e = this.failNextSync;
      this.failNextSync = null;
      throw e;
    }
    this.synced = this.entries.length;
  }
  async hasStagedEntry(stagedId: string, result: AuditResult, sinceMs: number): Promise<boolean> {
    return this.entries.slice(0, this.synced).some((e) => e.staged_id === stagedId && e.result === result && Date.parse(e.at) >= sinceMs - 3600_000);
  }
  /** what survives a kill: the synced entries only */
  crash(): void {
    this.entries = this.entries.slice(0, this.synced);
  }
  results(stagedId: string): string[] {
    return this.entries.filter((e) => e.staged_id === stagedId).map((e) => e.result);
  }
}

export class TestClock {
  constructor(public t = Date.parse('2026-11-22T10:00:00Z')) {}
  now(): number {
    return this.t;
  }
}

/** A place the notes plugin writes to; `applied` is its staged id -> result log, kept with the notes. */
export interface NotesState {
  notes: string[];
  applied: Map<string, ToolOutput>;
}

export type StopAt = 'none' | 'before-apply' | 'after-apply';

export function notesPlugin(state: NotesState, opts: { stopAt?: () => StopAt; canTell?: boolean } = {}): Plugin {
  const never = new Promise<never>(() => undefined);
  const add = defineTool({
    name: 'notes_add', title: 'Add a note', description: 'Stage a note.', plugin: 'notes', feature: 'notes.write', capability: 'edit_pages', write: true,
    input: z.object({ text: z.string() }),
    async preview(input) {
      return { preview: { summary: `Add '${input.text.slice(0, 40)}'`, kind: 'diff' as const, changes: [] }, payload: { text: input.text }, target: null, target_version: null };
    },
    async apply(payload, _ctx: CallContext, staged?: StagedRef) {
      if (opts.stopAt?.() === 'before-apply') return never;
      const done = staged && state.applied.get(staged.id);
      if (done) return done;
      state.notes.push(String(payload.text));
      const out = { structured: { count: state.notes.length, text: payload.text }, text: 'added' };
      if (staged) state.applied.set(staged.id, out);
      if (opts.stopAt?.() === 'after-apply') return never;
      return out;
    },
    ...(opts.canTell === false
      ? {}
      : { applied: async (staged: StagedRef): Promise<AppliedState> => {
          const out = state.applied.get(staged.id);
          return out ? { state: 'applied', output: out } : { state: 'not_applied' };
        } }),
  });
  return { id: 'notes', title: 'Notes', kind: 'site', tools: () => [add] };
}

export const ADMIN: User = { id: 'usr_admin', login: 'admin', display_name: 'Admin', role: 'administrator', created: '2026-01-01T00:00:00.000Z' };
export const WRITER: User = { id: 'usr_writer', login: 'writer', display_name: 'Writer', role: 'contributor', created: '2026-01-01T00:00:00.000Z' };

export function ctxFor(user: User, tokenId: string | null = 'tok_a'): CallContext {
  const token = tokenId ? { id: tokenId, label: tokenId, hash: '0'.repeat(64), user_id: user.id, preview: 'gth_…test', created: '2026-01-01T00:00:00.000Z', last_used: null, scope: { read_only: false } } : null;
  return { user, capabilities: capabilitiesOf(user.role), token, request_id: 'req-1', client: 'test-client' };
}

export interface CoreWorld {
  clock: TestClock;
  audit: MemoryAudit;
  store: MemoryStagedStore;
  notes: NotesState;
  stopAt: StopAt;
  events: EventHub;
  registry: Registry;
  staging: Staging;
  /** a new Staging over the same stores: what the next start sees */
  restart(opts?: { canTell?: boolean }): Staging;
}

export function coreWorld(opts: { limits?: Partial<StagingLimits>; lifetimeMs?: number; canTell?: boolean } = {}): CoreWorld {
  const clock = new TestClock();
  const audit = new MemoryAudit();
  const store = new MemoryStagedStore();
  const notes: NotesState = { notes: [], applied: new Map() };
  const options = new MemoryDocumentStore<OptionsData>({ ...emptyOptions(), users: [ADMIN, WRITER] });
  const users = (id: string) => options.read().users.find((u) => u.id === id);
  const world = { clock, audit, store, notes, stopAt: 'none' as StopAt } as CoreWorld;
  const build = (canTell = opts.canTell) => {
    const events = new EventHub();
    const registry = new Registry();
    registry.add(notesPlugin(notes, { stopAt: () => world.stopAt, ...(canTell === undefined ? {} : { canTell }) }));
    const auditor = new Auditor(audit, new StatsRecorder(options, clock), clock, () => 'local');
    const staging = new Staging({ store, users, registry, auditor, events, clock, auditTrail: audit, ...(opts.limits ? { limits: opts.limits } : {}), ...(opts.lifetimeMs ? { lifetimeMs: opts.lifetimeMs } : {}) });
    Object.assign(world, { events, registry, staging });
    return staging;
  };
  build();
  world.restart = (o = {}) => {
    world.stopAt = 'none';
    audit.crash();
    return build(o.canTell ?? opts.canTell);
  };
  return world;
}
