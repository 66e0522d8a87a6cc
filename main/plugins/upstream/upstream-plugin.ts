import { OneQueued } from '../../lib/one-queued.ts';
import type { Plugin, PluginHost, Tool } from '../../core/calls/tool.ts';
import { TOOL_NAME } from '../../core/calls/registry.ts';
import type { DocumentStore } from '../../core/ports/ports.ts';
import type { Logger } from '../../lib/logger.ts';
import { UpstreamConnection, type ConnectionSpec } from './connection.ts';
import type {
  InstructionsDefinition,
  PinnedView,
  PromptDefinition,
  ToolDefinition,
  UpstreamRecord,
  UpstreamsData,
} from './upstream-data.ts';
import { reconcilePrompts } from './prompt-pins.ts';
import { isOffered, namespaced, reconcile, samePinList, samePins, stateOf, type Reconciled } from './pinning.ts';
import { observeView, reconcileViews, toolViewUri, viewUriProblem } from './views.ts';
import { givenInstructions, instructionsListing, reconcileInstructions } from './instructions.ts';
import { LogRelay, type LogMessage } from './log-relay.ts';
import { toolFor } from './upstream-tools.ts';
import { UpstreamSurface } from './upstream-surface.ts';
import { promptPinsOf } from './oauth/oauth-upstreams.ts';

export interface UpstreamPluginDeps {
  store: DocumentStore<UpstreamsData>;
  /** the plugin that already owns a tool name, if any (a built-in one, another upstream) */
  ownerOf(name: string): string | undefined;
  /** why the registry would refuse this tool (a schema its validator cannot compile, such as a pattern RE2 cannot run), or null */
  toolProblem?(tool: Tool): string | null;
  log: Logger;
  /** health or tools changed: the console reloads */
  changed(): void;
  /** connect when started (the service); a CLI command on the data dir connects only when asked */
  autoConnect: boolean;
  /**
   * offered only once the service is ready (`goLive`), not when started: registering thousands of pinned
   * tools is kept off the path to ready, like their connections
   */
  offerLater?: boolean;
  backoff?: { baseMs: number; maxMs: number };
  /** how long each read of a write's preview may take (default 5 s, PREVIEW_LIMITS.readMs; tests shorten it) */
  previewReadMs?: number;
  /** a resource clients subscribed to was updated upstream (its URI as clients name it) */
  resourceUpdated?(uri: string): void;
  /** one of its log messages, named, bounded and within its rate (log-relay.ts), for the clients of this upstream */
  logged?(upstream: string, message: LogMessage): void;
}

/**
 * One upstream MCP server as a plugin (id = the upstream's id, so audit's
 * source_plugin names it): its approved tools, namespaced `<id>__<tool>`,
 * offered through the registry; every (re)listing reconciled against the
 * pins, changed and new tools quarantined until a person approves them.
 */
export class UpstreamPlugin implements Plugin {
  readonly kind = 'upstream' as const;
  readonly title: string;
  readonly connection: UpstreamConnection;
  /** its prompts and resources, passed through (upstream-surface.ts) */
  readonly surface: UpstreamSurface;
  /** names that could not be offered at the last (re)load, for people */
  problems: string[] = [];
  /** its log messages on their way to clients: how many were passed on and dropped */
  readonly logs: LogRelay;
  private host: PluginHost | null = null;
  /** offerLater: set once the service is ready */
  private live = false;
  /** the registry's verdict on each approved definition, by its hash (compiled once, not at every publish) */
  private readonly verdicts = new Map<string, string | null>();
  /** the latest listing not saved yet: a burst of listings saves the last one, once (lib/one-queued.ts) */
  private latest: readonly ToolDefinition[] | null = null;
  private readonly saver = new OneQueued(() => this.saveLatest());

  constructor(
    readonly id: string,
    spec: ConnectionSpec,
    private readonly deps: UpstreamPluginDeps,
  ) {
    this.title = `Upstream ${id}`;
    this.logs = new LogRelay(id, (m) => deps.logged?.(id, m));
    this.connection = new UpstreamConnection(spec, {
      onTools: (defs) => void this.relist(defs),
      onChange: () => deps.changed(),
      log: deps.log,
      ...(deps.backoff ? { backoff: deps.backoff } : {}),
      onSurface: (what) => void this.surface.refresh(what),
      onResourceUpdated: (uri) => this.surface.updated(uri),
      onInstructions: (text) => void this.pinInstructions(instructionsListing(text)),
      onLog: (params) => this.logs.take(params),
    });
    this.surface = new UpstreamSurface(id, this.connection, {
      log: deps.log,
      changed: () => this.surfaceChanged(),
      ...(deps.resourceUpdated ? { updated: deps.resourceUpdated } : {}),
      pins: {
        read: () => {
          const r = this.record();
          return r ? promptPinsOf(r) : null;
        },
        pin: (defs) => this.pinPrompts(defs),
      },
      instructions: () => {
        const r = this.record();
        return r?.enabled ? givenInstructions(r.instructions) : null;
      },
      views: {
        read: () => this.record()?.views ?? [],
        pin: (defs) => this.saveViews((pins) => reconcileViews(pins, defs)),
        observe: (def) => this.saveViews((pins) => ({ pins: observeView(pins, def), quarantined: [], removed: [] })),
      },
    });
  }

  /**
   * Its views' pins after a reading (or one view read again), saved when they changed; a view that now waits,
   * or is offered again, changes what its tools' `_meta` names: they are published again.
   */
  private async saveViews(next: (pins: readonly PinnedView[]) => Reconciled<PinnedView>): Promise<void> {
    const now = this.record()?.views ?? [];
    if (samePins(next(now).pins, now)) return;
    const r = await this.deps.store
      .update((d) => {
        const rec = d.upstreams.find((u) => u.id === this.id);
        if (!rec) return null;
        const out = next(rec.views);
        rec.views = out.pins;
        return out;
      })
      .catch(
        (e: unknown) =>
          void this.deps.log.error('upstream: could not save its views', {
            upstream: this.id,
            error: (e as Error).message,
          }),
      );
    if (!r) return;
    const waiting = r.pins.filter((p) => p.pending && !p.hidden && !p.removed).map((p) => p.name);
    if (waiting.length)
      this.deps.log.warn('upstream: views wait until a person approves them (gatehouse upstreams review)', {
        upstream: this.id,
        views: waiting.slice(0, 50),
      });
    this.publish();
    this.deps.changed();
  }

  /** The instructions of a fresh connection against their pin, saved when that changed (a changed text waits for a person). */
  private async pinInstructions(listed: readonly InstructionsDefinition[]): Promise<void> {
    const now = this.record()?.instructions;
    if (!now || samePins(reconcileInstructions(now, listed).pins, now)) return;
    const r = await this.deps.store
      .update((d) => {
        const rec = d.upstreams.find((u) => u.id === this.id);
        if (!rec) return null;
        const out = reconcileInstructions(rec.instructions, listed);
        rec.instructions = out.pins;
        return out;
      })
      .catch(
        (e: unknown) =>
          void this.deps.log.error('upstream: could not save its instructions', {
            upstream: this.id,
            error: (e as Error).message,
          }),
      );
    if (!r) return;
    if (r.quarantined.length)
      this.deps.log.warn(
        'upstream: its instructions changed or are new: clients get the approved ones (or none) until a person approves them (gatehouse upstreams review)',
        { upstream: this.id },
      );
    this.deps.changed();
  }

  private surfaceChanged(): void {
    this.host?.surfaceChanged?.();
    this.deps.changed();
  }

  record(): UpstreamRecord | undefined {
    return this.deps.store.read().upstreams.find((u) => u.id === this.id);
  }

  tools(): readonly Tool[] {
    return this.deps.offerLater && !this.live ? [] : this.offered();
  }

  async start(host: PluginHost): Promise<void> {
    this.host = host;
    if (this.deps.offerLater && !this.live) return;
    this.publish();
    if (this.deps.autoConnect && this.record()?.enabled) this.connection.start();
  }

  /** The service is ready: an upstream loaded at start connects now, and offers its pinned tools on a later turn. */
  goLive(): void {
    this.live = true;
    if (this.record()?.enabled) this.connection.start();
    setImmediate(() => this.publish());
  }

  async stop(): Promise<void> {
    this.host = null;
    await this.connection.stop();
  }

  status(): ReturnType<NonNullable<Plugin['status']>> {
    if (!this.record()?.enabled) return { status: 'disabled', detail: 'disabled by a person' };
    const h = this.connection.snapshot();
    if (h.status === 'signed_out') return { status: 'signed_out', detail: 'signed out by a person' };
    if (h.status === 'sign_in_required') return { status: 'sign_in_required', detail: h.last_error };
    if (h.status === 'down') return { status: 'down', detail: h.last_error ?? 'not connected' };
    return { status: 'ok', detail: h.status === 'degraded' ? `degraded: ${h.last_error ?? ''}` : null };
  }

  /**
   * Listed definitions waiting in quarantine (new, changed, hint flipped): a
   * client calling one gets `unknown tool`, so the health report says how many
   * wait. A disabled upstream offers nothing anyway and counts none.
   */
  awaitingReview(): { tools: number; prompts: number; views: number; instructions: number } {
    const rec = this.record();
    if (!rec?.enabled) return { tools: 0, prompts: 0, views: 0, instructions: 0 };
    const waiting = (pins: ReadonlyArray<Parameters<typeof stateOf>[0]>) =>
      pins.filter((p) => !p.removed && stateOf(p) === 'quarantined').length;
    return {
      tools: waiting(rec.tools),
      prompts: waiting(rec.prompts ?? []),
      views: waiting(rec.views),
      instructions: waiting(rec.instructions),
    };
  }

  /** Waits for the re-listings queued so far (tests, and `add` before it answers). */
  settled(): Promise<void> {
    return this.saver.settled();
  }

  /** A fresh listing against the pins, saved, then what is offered is published. */
  relist(defs: readonly ToolDefinition[]): Promise<void> {
    this.surface.noteTools(defs);
    this.latest = defs;
    return this.saver.kick();
  }

  private async saveLatest(): Promise<void> {
    const defs = this.latest;
    this.latest = null;
    if (!defs) return;
    // A listing that changes no pin (every start, every list_changed that changed nothing) writes nothing:
    // with thousands of tools upstreams.json is megabytes.
    const now = this.record();
    if (now && samePinList(reconcile(now.tools, defs).pins, now.tools)) return;
    try {
      const r = await this.deps.store.update((d) => {
        const rec = d.upstreams.find((u) => u.id === this.id);
        if (!rec) return null;
        const out = reconcile(rec.tools, defs);
        rec.tools = out.pins;
        return out;
      });
      if (!r) return;
      if (r.quarantined.length)
        this.deps.log.warn('upstream: tools quarantined until a person approves them (gatehouse upstreams review)', {
          upstream: this.id,
          tools: r.quarantined.slice(0, 50),
        });
      if (r.removed.length)
        this.deps.log.warn('upstream: tools no longer listed', { upstream: this.id, tools: r.removed.slice(0, 50) });
      this.publish();
      this.deps.changed();
    } catch (e) {
      this.deps.log.error('upstream: could not save a re-listing', {
        upstream: this.id,
        error: (e as Error).message,
      });
    }
  }

  /** A fresh prompt listing against the prompt pins, saved (prompt-pins.ts); the surface then offers the approved ones. */
  private async pinPrompts(defs: readonly PromptDefinition[]): Promise<void> {
    // The usual re-listing changes nothing: no write to the disk for it.
    const rec = this.record();
    const now = rec ? promptPinsOf(rec) : null;
    if (now && samePins(reconcilePrompts(now, defs).pins, now)) return;
    const r = await this.deps.store
      .update((d) => {
        const rec = d.upstreams.find((u) => u.id === this.id);
        if (!rec) return null;
        const out = reconcilePrompts(promptPinsOf(rec), defs);
        rec.prompts = out.pins;
        return out;
      })
      .catch(
        (e: unknown) =>
          void this.deps.log.error('upstream: could not save a prompt listing', {
            upstream: this.id,
            error: (e as Error).message,
          }),
      );
    if (!r) return;
    if (r.first && r.pins.length)
      this.deps.log.info(
        'upstream: its prompts were not pinned yet: those listed now are pinned approved (see gatehouse upstreams prompts)',
        { upstream: this.id, prompts: r.pins.slice(0, 50).map((p) => p.name) },
      );
    if (r.quarantined.length)
      this.deps.log.warn('upstream: prompts quarantined until a person approves them (gatehouse upstreams review)', {
        upstream: this.id,
        prompts: r.quarantined.slice(0, 50),
      });
    if (r.removed.length)
      this.deps.log.warn('upstream: prompts no longer listed', { upstream: this.id, prompts: r.removed.slice(0, 50) });
  }

  /** Offers the approved tools and prompts; names that cannot be offered are reported, never resolved by last-wins. */
  publish(): void {
    if (this.surface.offer()) this.surfaceChanged();
    if (!this.host) return;
    const tools = this.offered();
    try {
      this.host.setTools(tools);
    } catch {
      // One bad tool (a schema our validator refuses) must not take the others down: offer them one by one.
      this.host.setTools([]);
      for (const t of tools) {
        try {
          this.host.putTool(t);
        } catch (e) {
          this.problems.push(`${t.name}: ${(e as Error).message.slice(0, 300)}`);
        }
      }
    }
  }

  private offered(): Tool[] {
    const rec = this.record();
    this.problems = [];
    if (!rec?.enabled) return [];
    const out: Tool[] = [];
    for (const pin of rec.tools.filter(isOffered)) {
      const name = namespaced(this.id, pin.name);
      const owner = this.deps.ownerOf(name);
      if (!TOOL_NAME.test(name))
        this.problems.push(
          `${name}: not offered: a tool name is 1-128 of A-Z a-z 0-9 _ - . (the upstream's name '${pin.name.slice(0, 100)}' does not fit)`,
        );
      else if (owner !== undefined && owner !== this.id)
        this.problems.push(`${name}: not offered: the name is taken by plugin '${owner}'`);
      else {
        const tool = toolFor(
          {
            id: this.id,
            connection: this.connection,
            handedOut: this.surface.handedOut,
            pins: () => this.record()?.tools ?? [],
            recipes: () => this.record()?.recipes ?? [],
            ...(this.deps.previewReadMs ? { previewReadMs: this.deps.previewReadMs } : {}),
            viewServed: (own) => this.surface.views.served(own),
          },
          pin,
        );
        const view = toolViewUri(pin.approved!.definition._meta);
        const refused = view !== undefined ? viewUriProblem(view) : null;
        // The tool is offered all the same, without naming the view: a host shows its text result.
        if (refused) this.problems.push(`${name}: its view ${view!.slice(0, 200)} is not named to clients: ${refused}`);
        const hash = pin.approved!.hash;
        if (!this.verdicts.has(hash)) this.verdicts.set(hash, this.deps.toolProblem?.(tool) ?? null);
        const problem = this.verdicts.get(hash);
        // One tool the registry would refuse (its schema uses a pattern RE2 cannot run) must not keep the others out.
        if (problem)
          this.problems.push(`${name}: not offered: ${problem.replace(/^tool '[^']*' of plugin '[^']*': /, '')}`);
        else out.push(tool);
      }
    }
    if (this.problems.length)
      this.deps.log.warn('upstream: some tools cannot be offered', {
        upstream: this.id,
        problems: this.problems.slice(0, 20),
      });
    return out;
  }
}
