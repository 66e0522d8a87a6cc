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
import { ClientProcesses, clientKeyOf } from './client-processes.ts';
import type { StdioLauncher } from './sandbox/confinement.ts';
import type { Clock, Timers } from '../../lib/clock.ts';
import type { CallContext, ClientNeed } from '../../core/calls/tool.ts';
import { GatehouseError } from '../../core/errors.ts';
import { definitionHash, hashOf } from './pinning.ts';

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
  backoff?: { baseMs: number; maxMs: number };
  /** how long each read of a write's preview may take (default 5 s, PREVIEW_LIMITS.readMs; tests shorten it) */
  previewReadMs?: number;
  /** a resource clients subscribed to was updated upstream (its URI as clients name it) */
  resourceUpdated?(uri: string): void;
  /** one of its log messages, named, bounded and within its rate (log-relay.ts), for the clients of this upstream */
  logged?(upstream: string, message: LogMessage): void;
  /** an upstream with one process per client: each client's launcher (confined, its own HOME), the idle stop's clock and timers */
  perClient?: {
    /** the upstream's process setting as stored (absent: shared), read once: a change makes a fresh plugin */
    process: UpstreamRecord['process'];
    launcher(client: string): StdioLauncher | undefined;
    clock: Clock;
    timers: Timers;
  };
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
  /** the stored record the tools last offered were made from (records are replaced, never changed, on update) */
  private offeredFrom: UpstreamRecord | undefined | null = null;
  /** its log messages on their way to clients: how many were passed on and dropped */
  readonly logs: LogRelay;
  private host: PluginHost | null = null;
  /** the registry's verdict on each approved definition, by its hash (compiled once, not at every publish) */
  private readonly verdicts = new Map<string, string | null>();
  /** the latest listing not saved yet: a burst of listings saves the last one, once (lib/one-queued.ts) */
  private latest: readonly ToolDefinition[] | null = null;
  private readonly saver = new OneQueued(() => this.saveLatest());
  /** one process per client token (docs/upstreams.md, "One process per client"); null: the one connection serves every client */
  readonly processes: ClientProcesses | null = null;
  /** the client capability sets each tool is listed under, learned at each connect (learnClientNeeds); absent: every client */
  private readonly listedFor = new Map<string, ReadonlyArray<ReadonlyArray<ClientNeed>>>();
  private readonly learner = new OneQueued(() => this.learnClientNeeds());
  /** the tool names of the shared connection's last listing (what learnClientNeeds compares with), and its hash */
  private listedNames: string[] = [];
  private listingKey = '';
  private learnedAtAdd: UpstreamRecord['client_needs'] | null = null;
  /** what each client's own process listed, by tool name: a definition other than the approved one is held */
  private readonly clientListings = new Map<string, Map<string, string>>();

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
      onSurface: (what) => {
        void this.surface.refresh(what);
        if (what === 'connected') void this.learner.kick();
      },
      onResourceUpdated: (uri) => this.surface.updated(uri),
      onInstructions: (text) => void this.pinInstructions(instructionsListing(text)),
      onLog: (params) => this.logs.take(params),
    });
    const mode = deps.perClient?.process;
    if (mode?.mode === 'per-client' && spec.transport.kind === 'stdio' && deps.perClient) {
      const per = deps.perClient;
      this.processes = new ClientProcesses({
        id,
        bounds: { max: mode.max, idleMs: mode.idle_ms },
        clock: per.clock,
        timers: per.timers,
        changed: () => deps.changed(),
        make: (client) => {
          const launcher = per.launcher(client);
          return new UpstreamConnection(
            { ...spec, ...(launcher ? { launcher } : {}) },
            {
              // Definitions stay pinned once per upstream: a client's process that lists another is reconciled like any listing.
              onTools: (defs) => {
                this.clientListings.set(client, new Map(defs.map((d) => [d.name, definitionHash(d)])));
                void this.clientListed(defs);
              },
              onChange: () => deps.changed(),
              log: deps.log,
              ...(deps.backoff ? { backoff: deps.backoff } : {}),
            },
          );
        },
      });
    }
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
    return this.offered();
  }

  async start(host: PluginHost): Promise<void> {
    this.host = host;
    // The registry took the tools at add (tools()); offering them again from the same record would only build and
    // compile every one of them a second time (thousands, for a large server, on the path to ready).
    if (this.record() !== this.offeredFrom) this.publish();
    else if (this.surface.offer()) this.surfaceChanged();
    if (this.deps.autoConnect && this.record()?.enabled) this.connection.start();
  }

  /** The service is ready: an upstream loaded at start connects now. */
  goLive(): void {
    if (this.record()?.enabled) this.connection.start();
  }

  async stop(): Promise<void> {
    this.host = null;
    await Promise.all([this.connection.stop(), this.processes?.stopAll()]);
  }

  /**
   * Runs one call on the connection that serves this caller: the shared one, or (one process per client)
   * the caller's own, started at its first call. A tool its own process lists with another definition
   * than the approved one is held there, as a changed definition is held for everyone.
   */
  through<T>(
    ctx: CallContext,
    tool: { name: string; hash: string },
    fn: (c: UpstreamConnection) => Promise<T>,
  ): Promise<T> {
    if (!this.processes) return fn(this.connection);
    return this.processes.use(ctx, async (c) => {
      const listed = this.clientListings.get(clientKeyOf(ctx))?.get(tool.name);
      if (listed !== undefined && listed !== tool.hash)
        throw new GatehouseError(
          'unknown_tool',
          `upstream '${this.id}': this client's process lists '${tool.name}' with another definition than the one approved; it waits for a person to review it (gatehouse upstreams review ${this.id})`,
          { upstream: this.id },
        );
      return fn(c);
    });
  }

  /** A client's own process listed its tools: the pins hear it only when it differs from them (no write for the usual same listing). */
  private clientListed(defs: readonly ToolDefinition[]): Promise<void> {
    const now = this.record()?.tools ?? [];
    if (samePins(reconcile(now, defs).pins, now)) return Promise.resolve();
    return this.relist(defs);
  }

  /**
   * Which tools the upstream lists only to a client that can sample or elicit (Gatehouse declares both to it, so
   * its own listing has them all): it is asked once more declaring neither, in a session of its own; only when
   * that lists fewer tools is it asked declaring each alone. A tool then goes only to clients that declared what
   * it was listed under (server-factory.ts). A probe that fails leaves every tool listed to every client, as before.
   */
  private async learnClientNeeds(): Promise<void> {
    const names = this.listedNames;
    const listing = this.listingKey;
    const kept = this.record()?.client_needs ?? this.learnedAtAdd;
    if (kept && kept.listing === listing) return this.takeNeeds(new Map(kept.tools.map((t) => [t.name, t.sets])));
    try {
      const none = new Set(await this.connection.probeTools({}));
      const missing = names.filter((n) => !none.has(n));
      const next = new Map<string, ReadonlyArray<ReadonlyArray<ClientNeed>>>();
      if (missing.length) {
        const sampling = new Set(await this.connection.probeTools({ sampling: {} }));
        const elicitation = new Set(await this.connection.probeTools({ elicitation: { form: {}, url: {} } }));
        for (const n of missing) {
          const sets: ClientNeed[][] = [];
          if (sampling.has(n)) sets.push(['sampling']);
          if (elicitation.has(n)) sets.push(['elicitation']);
          next.set(n, sets.length ? sets : [['sampling', 'elicitation']]);
        }
      }
      const learned = { listing, tools: [...next].map(([name, sets]) => ({ name, sets: sets.map((x) => [...x]) })) };
      // Kept with the record: the next start with the same listing asks nothing (before it is stored, `add` keeps it).
      this.learnedAtAdd = learned;
      await this.deps.store
        .update((d) => {
          const rec = d.upstreams.find((u) => u.id === this.id);
          if (rec) rec.client_needs = learned;
        })
        .catch(() => undefined);
      this.takeNeeds(next);
    } catch (e) {
      this.deps.log.warn(
        'upstream: could not learn which tools need a client capability; all are listed to every client',
        {
          upstream: this.id,
          error: (e as Error).message.slice(0, 300),
        },
      );
    }
  }

  private takeNeeds(next: Map<string, ReadonlyArray<ReadonlyArray<ClientNeed>>>): void {
    const same =
      next.size === this.listedFor.size && [...next].every(([k, v]) => samePins([v], [this.listedFor.get(k)]));
    if (same) return;
    this.listedFor.clear();
    for (const [k, v] of next) this.listedFor.set(k, v);
    this.publish();
    this.deps.changed();
  }

  /** What was learned of the listing at `add` (the record is stored after it): `add` waits for it and stores it. */
  async learnedNeeds(): Promise<UpstreamRecord['client_needs']> {
    await this.learner.settled();
    return this.learnedAtAdd ?? undefined;
  }

  /** The token was revoked: its own process, if it has one, is stopped (with what it held for that client). */
  async tokenRevoked(tokenId: string): Promise<void> {
    this.clientListings.delete(tokenId);
    await this.processes?.stopFor(tokenId);
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
    this.listedNames = defs.map((d) => d.name);
    this.listingKey = hashOf(defs.map(definitionHash).sort());
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
    this.offeredFrom = rec;
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
            through: (ctx, t, fn) => this.through(ctx, t, fn),
            listedFor: (tool) => this.listedFor.get(tool),
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
