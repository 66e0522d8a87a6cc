import type { z } from 'zod';
import {
  DEFAULT_MAX_PROCESSES,
  DEFAULT_PROCESS_IDLE_MS,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  RESERVED_HEADERS,
  RESERVED_UPSTREAM_IDS,
  type UpstreamAddInput,
  type UpstreamDetail,
  type UpstreamGrantInput,
  type UpstreamProcessSetInput,
  type UpstreamProcessView,
  type UpstreamPromptView,
  type UpstreamRecipeInput,
  type UpstreamRecipeRemoveInput,
  type UpstreamReviewInput,
  type UpstreamTestAnswer,
  type UpstreamToolView,
  type UpstreamView,
} from '../../contract/upstreams.ts';
import type { Vault } from '../../core/ports/ports.ts';
import type { Registry } from '../../core/calls/registry.ts';
import type { UpstreamActions } from '../../core/ports/upstreams-port.ts';
import { GatehouseError } from '../../core/errors.ts';
import { clientTokenLookup, upstreamSecretsAccount } from '../../store/vault-account.ts';
import { UpstreamSecrets, type UpstreamRecord } from './upstream-data.ts';
import type { ConnectionSpec } from './connection.ts';
import { approve, reconcile, stateOf, toolView, type Pin } from './pinning.ts';
import { promptView, reconcilePrompts } from './prompt-pins.ts';
import { UpstreamPlugin, type UpstreamPluginDeps } from './upstream-plugin.ts';
import { applyInstructionsReview, applyPromptReview, applyReview, applyViewReview } from './review.ts';
import { instructionsListing, instructionsView, reconcileInstructions } from './instructions.ts';
import type { LogMessage } from './log-relay.ts';
import { reconcileViews, viewView } from './views.ts';
import { OAuthCoordinator, type CoordinatorDeps } from './oauth/coordinator.ts';
import { awaitingConsent, oauthOf, storedOAuth, targetOf } from './oauth/oauth-upstreams.ts';
import type { OAuthStatus } from '../../contract/oauth-status.ts';
import { Confinement, type ConfinementDeps } from './sandbox/confinement.ts';
import { sandboxOf } from '../../contract/sandbox-grants.ts';
import type { RecipeView } from '../../contract/preview-recipes.ts';
import { recipeProblems, recipeViews } from './preview-recipes.ts';
import { statefulServer } from '../../contract/stateful-servers.ts';
import { systemClock, systemTimers, type Clock, type Timers } from '../../lib/clock.ts';

export interface UpstreamManagerDeps extends Omit<UpstreamPluginDeps, 'ownerOf'> {
  vault: Vault;
  registry: Registry;
  /** made ready before an upstream is added (the JSON Schema validator its tools need, loaded on first use) */
  prepare?: () => Promise<void>;
  /** OAuth sign-in seams (tests): callback ports, fetch, the default Client ID Metadata Document URL, the refresh timers */
  oauth?: Pick<
    CoordinatorDeps,
    'callbackPorts' | 'fetch' | 'flowTtlMs' | 'defaultClientMetadataUrl' | 'refreshTimers'
  > & {
    clientMetadataUrl?: string;
  };
  /** where each stdio upstream's own HOME lives (the data dir) and, for tests, the person's HOME and the platform */
  sandbox: Omit<ConfinementDeps, 'note'>;
  /** the clock and timers that stop idle per-client processes (tests move time instead of waiting) */
  processTime?: { clock: Clock; timers: Timers };
}

/**
 * The upstream servers a person configured: their records in upstreams.json,
 * their secrets in the vault, one UpstreamPlugin each in the registry. Every
 * change takes effect at once (plugins are added, re-published or removed
 * while the service runs). Implements the core's UpstreamActions port.
 */
export class UpstreamManager implements UpstreamActions {
  private readonly plugins = new Map<string, UpstreamPlugin>();
  /** set by `connectAll` once the service is ready: plugins made from then on connect when they start */
  private live = false;
  /** fresh connections after a sign-in or sign-out, under way: `test` waits for them */
  private readonly restarting = new Map<string, Promise<void>>();
  /** the service's one OAuth coordinator (docs/oauth.md) */
  readonly oauth: OAuthCoordinator;
  /** the OS sandbox stdio upstreams run in (docs/upstreams.md, "Confinement") */
  readonly confinement: Confinement;

  /** who hears that a subscribed resource was updated (the MCP endpoint) */
  private readonly updateListeners = new Set<(uri: string) => void>();

  /** who hears the upstreams' log messages (the MCP endpoint) */
  private readonly logListeners = new Set<(upstream: string, message: LogMessage) => void>();

  /** Hears every upstream's log messages (log-relay.ts: named, masked, bounded); returns the unsubscribe. */
  onLog(listener: (upstream: string, message: LogMessage) => void): () => void {
    this.logListeners.add(listener);
    return () => this.logListeners.delete(listener);
  }

  /** Hears every subscribed resource's update, under the URI clients use; returns the unsubscribe. */
  onResourceUpdated(listener: (uri: string) => void): () => void {
    this.updateListeners.add(listener);
    return () => this.updateListeners.delete(listener);
  }

  constructor(private readonly deps: UpstreamManagerDeps) {
    this.confinement = new Confinement({
      ...deps.sandbox,
      // What the sandbox refused goes to that upstream's own log, shown on the Upstreams screen and by `upstreams show`.
      note: (id, line) => {
        this.plugins.get(id)?.connection.stderr.write(`${line}\n`);
        deps.log.warn('upstream: the sandbox refused', { upstream: id, refused: line });
      },
    });
    this.oauth = new OAuthCoordinator({
      vault: deps.vault,
      log: deps.log,
      changed: () => deps.changed(),
      ...deps.oauth,
      reconnect: (ids) => ids.forEach((id) => this.restartSoon(id)),
      bind: (id, b) =>
        deps.store.update((d) => {
          const o = oauthOf(
            d.upstreams.find((u) => u.id === id) ?? ({ transport: { kind: 'stdio' } } as UpstreamRecord),
          );
          if (o)
            Object.assign(o, {
              issuer: b.issuer,
              resource: b.resource,
              resource_metadata_url: b.resource_metadata_url ?? null,
            });
        }),
    });
  }

  /**
   * Views of stdio upstreams say how they are confined: the machine is asked (three runs of bwrap on Linux) before
   * the first view, by whoever shows one, and when the first of them starts; not by loading them, which every CLI
   * command without a service does, nor on the service's way to ready.
   */
  async settled(): Promise<void> {
    if (this.deps.store.read().upstreams.some((r) => r.transport.kind === 'stdio')) await this.confinement.ready();
  }

  /** A plugin for every stored upstream, before the registry starts (they connect when it does). */
  async load(): Promise<UpstreamPlugin[]> {
    const out: UpstreamPlugin[] = [];
    const stored = this.deps.store.read().upstreams;
    for (const rec of stored) {
      const o = targetOf(rec, this.deps.oauth?.clientMetadataUrl ?? null);
      if (o) await this.oauth.register(o.target, o.binding);
      const p = this.pluginFor(rec, await this.specFor(rec).catch((e: unknown) => this.unusable(rec, e)));
      this.plugins.set(rec.id, p);
      out.push(p);
    }
    return out;
  }

  /**
   * Connects every enabled upstream (each in the background, never throwing),
   * once the service is ready: the connections and the MCP client SDK they
   * load are kept off the path to ready. Only where the deps allow it (the
   * service; a CLI command on the data dir connects only when asked).
   */
  connectAll(): void {
    if (!this.deps.autoConnect || this.live) return;
    this.live = true;
    for (const p of this.plugins.values()) p.goLive();
  }

  /**
   * Ends every upstream at once (the service's stop): each gets its stdin
   * closed, then SIGTERM and SIGKILL to its process group (stdio-transport.ts),
   * side by side rather than one after another.
   */
  async stopAll(): Promise<void> {
    await Promise.all([...this.plugins.values()].map((p) => p.connection.stop().catch(() => undefined)));
  }

  list(): UpstreamView[] {
    return this.deps.store.read().upstreams.map((r) => this.view(r));
  }

  get(id: string): UpstreamDetail {
    const rec = this.record(id);
    return {
      ...this.view(rec),
      tool_list: rec.tools.map((t) => toolView(id, t)),
      prompt_list: (rec.prompts ?? []).map((p) => promptView(id, p)),
      view_list: rec.views.map((v) => viewView(id, v)),
      instructions: rec.instructions[0] ? instructionsView(id, rec.instructions[0]) : null,
      stderr: this.plugins.get(id)?.connection.stderrLines() ?? [],
      recipes: recipeViews(rec.recipes, rec.tools),
    };
  }

  recipes(id: string): RecipeView[] {
    const rec = this.record(id);
    return recipeViews(rec.recipes, rec.tools);
  }

  /**
   * Adds or replaces the person's preview recipe for one write tool (the handler audits it), once it fits the
   * pinned definitions: its reads are tools the person classified as reads, its arguments ones they take.
   * The next staging of that tool uses it; nothing restarts.
   */
  async setRecipe(input: z.output<typeof UpstreamRecipeInput>): Promise<RecipeView[]> {
    const { recipe } = input;
    const problems = recipeProblems(recipe, this.record(input.id).tools);
    if (problems.length)
      throw new GatehouseError(
        'invalid_value',
        `the recipe for '${recipe.tool}' does not fit upstream '${input.id}': ${problems.slice(0, 5).join('; ')}`,
        { problems: problems.slice(0, 20) },
      );
    await this.deps.store.update((d) => {
      const rec = d.upstreams.find((u) => u.id === input.id)!;
      rec.recipes = [...rec.recipes.filter((r) => r.tool !== recipe.tool), recipe];
    });
    this.deps.changed();
    return this.recipes(input.id);
  }

  async removeRecipe(input: z.output<typeof UpstreamRecipeRemoveInput>): Promise<RecipeView[]> {
    if (!this.record(input.id).recipes.some((r) => r.tool === input.tool))
      throw new GatehouseError(
        'not_found',
        `upstream '${input.id}' has no recipe of yours for '${input.tool}' (a shipped recipe is replaced by one of yours, not removed: see gatehouse upstreams recipes ${input.id})`,
      );
    await this.deps.store.update((d) => {
      const rec = d.upstreams.find((u) => u.id === input.id)!;
      rec.recipes = rec.recipes.filter((r) => r.tool !== input.tool);
    });
    this.deps.changed();
    return this.recipes(input.id);
  }

  tools(id: string): UpstreamToolView[] {
    return this.record(id).tools.map((t) => toolView(id, t));
  }

  prompts(id: string): UpstreamPromptView[] {
    return (this.record(id).prompts ?? []).map((p) => promptView(id, p));
  }

  async add(input: z.output<typeof UpstreamAddInput>): Promise<UpstreamDetail> {
    const { id } = input;
    await this.deps.prepare?.();
    if (RESERVED_UPSTREAM_IDS.includes(id) || this.deps.registry.listPlugins().some((p) => p.id === id))
      throw new GatehouseError('conflict', `the id '${id}' is taken: pick another (see gatehouse upstreams list)`);
    if (this.deps.store.read().upstreams.some((u) => u.id === id))
      throw new GatehouseError('conflict', `an upstream '${id}' exists already: remove it first, or pick another id`);
    const t = input.transport;
    const secrets: UpstreamSecrets = {
      env: t.kind === 'stdio' ? t.env : [],
      headers: t.kind === 'http' ? t.headers : [],
    };
    for (const h of secrets.headers)
      if (
        RESERVED_HEADERS.includes(h.name.toLowerCase()) ||
        (h.name.toLowerCase() === 'authorization' && t.kind === 'http' && t.token_keychain)
      )
        throw new GatehouseError('invalid_value', `the header '${h.name}' is set by Gatehouse itself`);
    const oauth = t.kind === 'http' ? storedOAuth(id, t) : undefined;
    const process = processOf(id, t.kind, input.process);
    await this.confinement.ready();
    const rec: UpstreamRecord = {
      id,
      enabled: true,
      created: new Date().toISOString(),
      timeout_ms: input.timeout_ms ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
      ...(process ? { process } : {}),
      era: null,
      tools: [],
      prompts: null,
      recipes: [],
      views: [],
      instructions: [],
      secrets_account: secrets.env.length || secrets.headers.length ? upstreamSecretsAccount(id) : null,
      transport:
        t.kind === 'stdio'
          ? {
              kind: 'stdio',
              command: t.command,
              args: t.args,
              env_names: t.env.map((e) => e.name),
              sandbox: sandboxOf(t.command, t.args, t.sandbox),
            }
          : {
              kind: 'http',
              url: t.url,
              header_names: t.headers.map((h) => h.name),
              token_keychain: t.token_keychain ?? null,
              ...(oauth ? { oauth } : {}),
              ...(t.sse ? { sse: true } : {}),
            },
    };
    if (oauth) return this.addSignedOut(rec, secrets, t.kind === 'http' ? t.oauth?.client_secret : undefined);
    const spec: ConnectionSpec = {
      id,
      transport: rec.transport,
      secrets,
      token: await this.tokenFor(rec),
      timeoutMs: rec.timeout_ms,
      era: null,
      ...this.launcherOf(rec),
    };
    const plugin = this.pluginFor(rec, spec);
    let listed;
    try {
      listed = await plugin.connection.connect();
    } catch (e) {
      await plugin.connection.stop();
      throw e;
    }
    const unknown = input.read.filter((n) => !listed.some((d) => d.name === n));
    // The person consents to the set listed now (every tool pinned approved), or will in a second step (the console): until then each waits as new.
    rec.tools = reconcile([], listed).pins.map((p) => ({
      ...(input.approve_listed === false ? p : approve(p)),
      marked: input.read.includes(p.name) ? 'read' : null,
    }));
    // Its prompts the same way (none when their listing failed: a prompt listed later then waits as new).
    await plugin.surface.settled();
    rec.prompts = reconcilePrompts([], plugin.surface.listedPromptDefinitions() ?? []).pins.map((p) =>
      input.approve_listed === false ? p : approve(p),
    );
    // Its views too: what each asks for is in the answer (and the console's consent step) beside its tools.
    rec.views = reconcileViews([], plugin.surface.views.listedDefinitions() ?? []).pins.map((p) =>
      input.approve_listed === false ? p : approve(p),
    );
    // And its instructions: what it tells the model is consented to with what it offers.
    rec.instructions = reconcileInstructions([], instructionsListing(plugin.connection.instructions())).pins.map((p) =>
      input.approve_listed === false ? p : approve(p),
    );
    rec.era = plugin.connection.snapshot().era;
    // Which tools need a client capability, learned from this listing: the next start with the same listing asks nothing.
    const needs = await plugin.learnedNeeds();
    if (needs) rec.client_needs = needs;
    if (unknown.length) {
      await plugin.connection.stop();
      throw new GatehouseError(
        'invalid_value',
        `--read names tools '${id}' does not list: ${unknown.slice(0, 10).join(', ')}`,
      );
    }
    // Secrets first: a record without its secrets could not connect; a secret without a record is overwritten by the next add.
    try {
      if (rec.secrets_account) await this.deps.vault.set(rec.secrets_account, JSON.stringify(secrets));
      await this.deps.store.update((d) => void d.upstreams.push(rec));
    } catch (e) {
      await plugin.connection.stop();
      throw e;
    }
    this.plugins.set(id, plugin);
    // A prompt listing that arrived while the record was not stored yet is pinned now.
    await plugin.surface.repin();
    await this.deps.registry.addRunning(plugin);
    this.deps.changed();
    return this.get(id);
  }

  /**
   * An OAuth upstream is stored before its first sign-in (its tools cannot be
   * listed without one); the first listing after the sign-in waits, tools and
   * prompts quarantined as new, for the person's consent (`awaiting_consent`).
   */
  private async addSignedOut(
    rec: UpstreamRecord,
    secrets: UpstreamSecrets,
    clientSecret: string | undefined,
  ): Promise<UpstreamDetail> {
    const o = targetOf(rec, this.deps.oauth?.clientMetadataUrl ?? null)!;
    rec.prompts = [];
    if (rec.secrets_account) await this.deps.vault.set(rec.secrets_account, JSON.stringify(secrets));
    // The client secret goes only to the vault: the record names its account, no answer or log carries it.
    const secretAccount = oauthOf(rec)?.client_secret_account;
    if (secretAccount && clientSecret) await this.deps.vault.set(secretAccount, clientSecret);
    await this.deps.store.update((d) => void d.upstreams.push(rec));
    await this.oauth.register(o.target, null);
    const plugin = this.pluginFor(rec, await this.specFor(rec));
    this.plugins.set(rec.id, plugin);
    await this.deps.registry.addRunning(plugin);
    this.deps.changed();
    return this.get(rec.id);
  }

  /** Starts (or joins) the sign-in of an OAuth upstream: its status carries the authorization URL. */
  login(id: string): Promise<OAuthStatus> {
    this.record(id);
    return this.oauth.login(id);
  }

  logout(id: string): Promise<OAuthStatus> {
    this.record(id);
    return this.oauth.logout(id);
  }

  oauthStatus(id: string, waitMs = 0): Promise<OAuthStatus> {
    this.record(id);
    return this.oauth.wait(id, waitMs);
  }

  /** A fresh connection (after a sign-in or sign-out): the token it sends changed. */
  private restartSoon(id: string): void {
    const run = (this.restarting.get(id) ?? Promise.resolve())
      .then(async () => {
        const plugin = this.plugins.get(id);
        if (!plugin || !this.deps.store.read().upstreams.find((u) => u.id === id)?.enabled) return;
        await plugin.connection.stop();
        plugin.connection.start();
      })
      .catch(() => undefined)
      .finally(() => {
        if (this.restarting.get(id) === run) this.restarting.delete(id);
      });
    this.restarting.set(id, run);
  }

  async remove(id: string): Promise<{ id: string }> {
    const rec = this.record(id);
    this.oauth.forget(id);
    await this.deps.registry.remove(id);
    this.plugins.delete(id);
    await this.deps.store.update((d) => void (d.upstreams = d.upstreams.filter((u) => u.id !== id)));
    if (rec.secrets_account) await this.deps.vault.delete(rec.secrets_account).catch(() => false);
    const secretAccount = oauthOf(rec)?.client_secret_account;
    if (secretAccount) await this.deps.vault.delete(secretAccount).catch(() => false);
    await this.confinement.forget(id).catch(() => undefined);
    this.deps.changed();
    return { id };
  }

  async setEnabled(id: string, enabled: boolean): Promise<UpstreamView> {
    this.record(id);
    await this.deps.store.update((d) => void (d.upstreams.find((u) => u.id === id)!.enabled = enabled));
    const rec = this.record(id);
    // A fresh plugin: a disabled one offers nothing and holds no process or session.
    await this.deps.registry.remove(id);
    const plugin = this.pluginFor(rec, await this.specFor(rec));
    this.plugins.set(id, plugin);
    await this.deps.registry.addRunning(plugin);
    this.deps.changed();
    return this.view(rec);
  }

  /** Replaces a stdio upstream's sandbox grants (a person's action; the handler audits it) and restarts it with them. */
  async grant(input: z.output<typeof UpstreamGrantInput>): Promise<UpstreamDetail> {
    const rec = this.record(input.id);
    if (rec.transport.kind !== 'stdio')
      throw new GatehouseError(
        'invalid_value',
        `upstream '${input.id}' is an HTTP server: only stdio servers run in the sandbox`,
      );
    const sandbox = sandboxOf(rec.transport.command, rec.transport.args, input);
    await this.deps.store.update((d) => {
      const t = d.upstreams.find((u) => u.id === input.id)!.transport;
      if (t.kind === 'stdio') t.sandbox = sandbox;
    });
    // A fresh plugin: its launcher was made for the old grants (and a running process has them).
    await this.deps.registry.remove(input.id);
    const fresh = this.record(input.id);
    const plugin = this.pluginFor(fresh, await this.specFor(fresh));
    this.plugins.set(input.id, plugin);
    await this.deps.registry.addRunning(plugin);
    this.deps.changed();
    return this.get(input.id);
  }

  /** One process for every client, or one per client token (a person's action; the handler audits it); it restarts with it. */
  async setProcess(input: z.output<typeof UpstreamProcessSetInput>): Promise<UpstreamDetail> {
    const rec = this.record(input.id);
    const process = processOf(input.id, rec.transport.kind, input);
    await this.deps.store.update((d) => {
      const r = d.upstreams.find((u) => u.id === input.id)!;
      if (process) r.process = process;
      else delete r.process;
    });
    // A fresh plugin: its processes were made for the old mode (and a per-client one holds its client's state until it stops).
    await this.deps.registry.remove(input.id);
    const fresh = this.record(input.id);
    const plugin = this.pluginFor(fresh, await this.specFor(fresh));
    this.plugins.set(input.id, plugin);
    await this.deps.registry.addRunning(plugin);
    this.deps.changed();
    return this.get(input.id);
  }

  /** A token was revoked: the processes it had of its own are stopped at once. */
  async tokenRevoked(tokenId: string): Promise<void> {
    await Promise.all([...this.plugins.values()].map((p) => p.tokenRevoked(tokenId).catch(() => undefined)));
  }

  async test(id: string): Promise<UpstreamTestAnswer> {
    const rec = this.record(id);
    const plugin = this.plugins.get(id);
    if (!rec.enabled || !plugin)
      return { id, ok: false, latency_ms: null, protocol: null, tools: 0, error: 'the upstream is disabled' };
    await this.restarting.get(id);
    const started = Date.now();
    try {
      const listed = await plugin.connection.connect();
      await plugin.settled();
      await plugin.surface.settled();
      return {
        id,
        ok: true,
        latency_ms: Date.now() - started,
        protocol: plugin.connection.snapshot().protocol,
        tools: listed.length,
        error: null,
      };
    } catch (e) {
      return { id, ok: false, latency_ms: null, protocol: null, tools: 0, error: (e as Error).message };
    }
  }

  async review(input: z.output<typeof UpstreamReviewInput>): Promise<UpstreamToolView[]> {
    this.record(input.id);
    // Every approval names the definition the person saw (the console and the CLI send it bound): a bare name or
    // "all" would pin whatever waits by the time the request arrives, which may be what an upstream swapped in.
    if (input.approve.length || input.approve_prompts.length || input.approve_all)
      throw new GatehouseError(
        'invalid_value',
        `an approval names the definition the person saw: send consent: [{tool, hash}] and prompt_consent: [{prompt, hash}] with the hashes GET upstreams/${input.id} shows (gatehouse upstreams review ${input.id} --approve NAME=HASH); approve, approve_prompts and approve_all name no definition and are refused`,
      );
    await this.deps.store.update((d) => {
      const rec = d.upstreams.find((u) => u.id === input.id)!;
      // Both checked before either is kept: a refused prompt leaves the tools as they were.
      const [tools, prompts, views, instructions] = [
        applyReview(input.id, rec.tools, input),
        applyPromptReview(input.id, rec.prompts, input),
        applyViewReview(input.id, rec.views, input),
        applyInstructionsReview(input.id, rec.instructions, input),
      ];
      Object.assign(rec, { tools, prompts, views, instructions });
      // A person decided on the listing after the first sign-in: the consent it waited for is given.
      const o = oauthOf(rec);
      if (o?.first_listing_pending && rec.tools.length) o.first_listing_pending = false;
    });
    this.plugins.get(input.id)?.publish();
    this.deps.changed();
    return this.tools(input.id);
  }

  /** Health warnings that stay while they hold: each stdio upstream running unconfined, and why (docs/upstreams.md, "Confinement"). */
  warnings(): Array<{ code: string; message: string }> {
    return this.deps.store.read().upstreams.flatMap((r) => {
      if (r.transport.kind !== 'stdio' || !r.enabled) return [];
      const c = this.confinement.view(r.id, r.transport);
      if (c.state === 'confined') return [];
      return [
        {
          code: c.state === 'unconfined' ? 'upstream_unconfined' : 'upstream_sandbox_unavailable',
          message: `Upstream ${r.id} ${c.state === 'unconfined' ? 'runs unconfined' : 'cannot start confined'}: ${c.why}.${c.fix ? ` ${c.fix}` : ''}`,
        },
      ];
    });
  }

  private processView(rec: UpstreamRecord, command: string, args: readonly string[]): UpstreamProcessView {
    const p = rec.process ?? { mode: 'shared' as const, max: DEFAULT_MAX_PROCESSES, idle_ms: DEFAULT_PROCESS_IDLE_MS };
    return {
      ...p,
      running: this.plugins.get(rec.id)?.processes?.size ?? 0,
      suggestion: p.mode === 'shared' ? statefulServer(command, args) : null,
    };
  }

  private record(id: string): UpstreamRecord {
    const rec = this.deps.store.read().upstreams.find((u) => u.id === id);
    if (!rec) throw new GatehouseError('not_found', `no upstream '${id.slice(0, 40)}' (see gatehouse upstreams list)`);
    return rec;
  }

  private pluginFor(rec: UpstreamRecord, spec: ConnectionSpec): UpstreamPlugin {
    return new UpstreamPlugin(rec.id, spec, {
      ...this.deps,
      autoConnect: this.deps.autoConnect && this.live,
      ownerOf: (name) => this.deps.registry.entry(name)?.tool.plugin,
      resourceUpdated: (uri) => this.updateListeners.forEach((l) => l(uri)),
      logged: (upstream, m) => this.logListeners.forEach((l) => l(upstream, m)),
      toolProblem: (tool) => this.deps.registry.toolProblem(rec.id, tool),
      perClient: {
        process: rec.process,
        launcher: (client) =>
          rec.transport.kind === 'stdio' ? this.confinement.launcherFor(rec.id, rec.transport, client) : undefined,
        ...(this.deps.processTime ?? { clock: systemClock, timers: systemTimers }),
      },
    });
  }

  private async specFor(rec: UpstreamRecord): Promise<ConnectionSpec> {
    let secrets: UpstreamSecrets = { env: [], headers: [] };
    if (rec.secrets_account) {
      const raw = await this.deps.vault.get(rec.secrets_account);
      if (raw === null)
        throw new GatehouseError(
          'vault_unavailable',
          `the secrets of upstream '${rec.id}' are not in the vault; add it again`,
        );
      secrets = UpstreamSecrets.parse(JSON.parse(raw));
    }
    return {
      id: rec.id,
      transport: rec.transport,
      secrets,
      token: await this.tokenFor(rec),
      timeoutMs: rec.timeout_ms,
      era: rec.era,
      ...(oauthOf(rec) ? { auth: this.oauth.authFor(rec.id) } : {}),
      ...this.launcherOf(rec),
    };
  }

  private launcherOf(rec: UpstreamRecord): Pick<ConnectionSpec, 'launcher'> {
    return rec.transport.kind === 'stdio' ? { launcher: this.confinement.launcherFor(rec.id, rec.transport) } : {};
  }

  /** A connection that reports why it cannot run (its secrets are gone) instead of failing the whole start. */
  private unusable(rec: UpstreamRecord, e: unknown): ConnectionSpec {
    this.deps.log.error('upstream: cannot load its secrets', { upstream: rec.id, error: (e as Error).message });
    return {
      id: rec.id,
      transport: { kind: 'stdio', command: '/nonexistent/secrets-missing', args: [], env_names: [] },
      secrets: { env: [], headers: [] },
      token: null,
      timeoutMs: rec.timeout_ms,
      era: null,
    };
  }

  private async tokenFor(rec: UpstreamRecord): Promise<string | null> {
    if (rec.transport.kind !== 'http' || !rec.transport.token_keychain) return null;
    for (const account of clientTokenLookup(rec.transport.token_keychain)) {
      const token = await this.deps.vault.get(account);
      if (token) return token;
    }
    throw new GatehouseError(
      'not_found',
      `no token saved as '${rec.transport.token_keychain}' in the vault (save one with: gatehouse tokens create --keychain NAME on the upstream's side)`,
    );
  }

  private view(rec: UpstreamRecord): UpstreamView {
    const t = rec.transport;
    const plugin = this.plugins.get(rec.id);
    const health = plugin?.connection.snapshot() ?? {
      status: 'down' as const,
      last_error: null,
      latency_ms: null,
      restarts: 0,
      protocol: null,
      era: rec.era,
      connected_at: null,
    };
    const counts = (pins: ReadonlyArray<Pin<{ name: string }>>) => {
      const count = (s: string) => pins.filter((p) => !p.removed && stateOf(p) === s).length;
      return {
        approved: count('approved'),
        quarantined: count('quarantined'),
        hidden: count('hidden'),
        removed: pins.filter((p) => p.removed).length,
      };
    };
    return {
      id: rec.id,
      kind: t.kind,
      enabled: rec.enabled,
      created: rec.created,
      timeout_ms: rec.timeout_ms,
      ...(t.kind === 'stdio'
        ? {
            command: t.command,
            args: t.args,
            env_names: t.env_names,
            confinement: this.confinement.view(rec.id, t),
            process: this.processView(rec, t.command, t.args),
          }
        : {
            url: t.url,
            header_names: t.header_names,
            token_keychain: t.token_keychain,
            ...(t.oauth
              ? { oauth: this.oauth.status(rec.id), ...(awaitingConsent(rec) ? { awaiting_consent: true } : {}) }
              : {}),
            ...(t.sse ? { sse: true } : {}),
          }),
      health: rec.enabled ? health : { ...health, status: 'disabled' },
      tools: counts(rec.tools),
      prompts: counts(rec.prompts ?? []),
      views: counts(rec.views),
      ...(plugin ? { logs: plugin.logs.snapshot() } : {}),
      ...(rec.instructions[0] ? { instructions_state: stateOf(rec.instructions[0]) } : {}),
      problems: plugin ? [...plugin.problems, ...plugin.surface.problems, ...plugin.surface.views.problems] : [],
    };
  }
}

/** The stored process setting (absent: shared); one per client is for stdio servers, whose process is theirs to start. */
function processOf(
  id: string,
  kind: 'stdio' | 'http',
  p: { mode: 'shared' | 'per-client'; max: number; idle_ms: number } | undefined,
): UpstreamRecord['process'] {
  if (!p || p.mode === 'shared') return undefined;
  if (kind !== 'stdio')
    throw new GatehouseError(
      'invalid_value',
      `upstream '${id}' is an HTTP server: one process per client is for stdio servers (an HTTP server's sessions are its own to keep apart)`,
    );
  return { mode: p.mode, max: p.max, idle_ms: p.idle_ms };
}
