import type { Client } from '@modelcontextprotocol/client';
import type { CallContext } from '../../core/calls/tool.ts';
import type {
  CompletionRequest,
  ListedPrompt,
  ListedResource,
  ListedTemplate,
  SurfaceOffers,
} from '../../core/calls/surface.ts';
import type { PluginSurface } from '../../core/calls/tool.ts';
import { GatehouseError } from '../../core/errors.ts';
import { TOOL_NAME } from '../../core/calls/registry.ts';
import type { Logger } from '../../lib/logger.ts';
import type { UpstreamConnection } from './connection.ts';
import { isOffered, namespaced } from './pinning.ts';
import { listedPrompt, promptDefinitionOf } from './prompt-pins.ts';
import type { PinnedPrompt, PromptDefinition } from './upstream-data.ts';
import { UPSTREAM_FEATURE } from './upstream-tools.ts';
import { ownPromptName, unwrapUri, uriPrefix, wrapBlockUris, wrapUri } from './surface-names.ts';
import { usableUri } from './usable-uri.ts';
import { matchesTemplate } from './uri-template.ts';
import { OneQueued } from '../../lib/one-queued.ts';
import { UpstreamViews, type ViewDeps } from './upstream-views.ts';
import { viewPrefix } from './views.ts';
import { VIEW_SCHEME } from '../../contract/mcp-apps.ts';
import { isLogLevel, LOG_LEVELS, type LogLevel } from './log-relay.ts';
import type { ToolDefinition } from './upstream-data.ts';

/** URIs handed to clients in results (resource links, embedded resources) that may be read back, newest kept. */
const MAX_HANDED_URIS = 10_000;

export interface SurfaceDeps {
  log: Logger;
  changed(): void;
  /** the prompt pins in the upstream's record (null: none yet), and pinning a listing against them (saved) */
  pins: { read(): readonly PinnedPrompt[] | null; pin(defs: readonly PromptDefinition[]): Promise<void> };
  /** its MCP App views' pins (upstream-views.ts) */
  views: ViewDeps['pins'];
  /** a resource clients subscribed to was updated (the URI clients use) */
  updated?(uri: string): void;
  /** the instructions clients are given (instructions.ts: the approved text), or null */
  instructions?(): string | null;
}

/** Clients whose log level one upstream remembers. */
const MAX_LEVEL_HOLDERS = 1000;

/** Resources one upstream is subscribed to for clients at once. */
export const MAX_SUBSCRIBED = 1000;

/** Pages of one list followed at most (a server that never stops paging cannot hold the connection). */
const MAX_PAGES = 20;
/** Items kept of one list. */
const MAX_ITEMS = 2000;

type Page<K extends string> = { nextCursor?: string } & Record<K, unknown[]>;
const text = (v: unknown, max: number): string | undefined => (typeof v === 'string' ? v.slice(0, max) : undefined);
const opt = <K extends string, V>(k: K, v: V | undefined) => (v === undefined ? {} : ({ [k]: v } as Record<K, V>));

/**
 * An upstream's prompts, resources and resource templates, passed through
 * under Gatehouse's names (surface-names.ts). Listed at every connect and on
 * the upstream's prompts or resources list_changed; the last listing stays
 * while the upstream is down (a get or read then answers
 * upstream_unavailable, as a call does). Prompts are pinned like tools
 * (prompt-pins.ts): only approved ones are offered. Not pinned: a prompt's
 * messages and a resource's contents come with each get or read, like a
 * tool's result, and resource lists change with the upstream's data.
 */
export class UpstreamSurface implements PluginSurface {
  readonly capability = 'use_upstreams' as const;
  readonly feature = UPSTREAM_FEATURE;
  /** names and URIs that could not be offered at the last listing, for people */
  problems: string[] = [];
  private listedPrompts: ListedPrompt[] = [];
  private listedDefs: PromptDefinition[] | null = null;
  private listedResources: ListedResource[] = [];
  private listedTemplates: ListedTemplate[] = [];
  private readonly rev = { prompts: 0, resources: 0 };
  /** the upstream's own URIs it is subscribed to, and who holds each subscription (a client's token or stream) */
  private readonly subscribed = new Map<string, Set<string>>();
  /** what the upstream's capabilities offered at the last listing beyond its lists */
  private offered: SurfaceOffers = { completions: false, subscribe: false, logging: false };
  /** the log level each client (token) asked for; the upstream is sent the most verbose of them */
  private readonly levels = new Map<string, LogLevel>();
  /** the level the upstream was last sent on this connection */
  private sentLevel: LogLevel | null = null;
  /** the upstream's own URIs it handed to a client in a result, oldest first */
  private readonly handed = new Set<string>();
  /** what to re-list next (a burst of list_changed is one more listing, not one each: lib/one-queued.ts) */
  private wanted = new Set<'connected' | 'prompts' | 'resources' | 'views'>();
  private readonly lister = new OneQueued(() => this.listWanted());
  /** its MCP App views, read and pinned at each listing */
  readonly views: UpstreamViews;
  /** the views resources/list showed last (JSON): a change is a new resources revision */
  private offeredViews = '[]';

  constructor(
    private readonly id: string,
    private readonly connection: UpstreamConnection,
    private readonly deps: SurfaceDeps,
  ) {
    this.views = new UpstreamViews(id, connection, { log: deps.log, pins: deps.views });
  }

  prompts(): readonly ListedPrompt[] {
    return this.listedPrompts;
  }

  resources(): readonly ListedResource[] {
    const views = this.views.resources();
    return views.length ? [...this.listedResources, ...views] : this.listedResources;
  }

  templates(): readonly ListedTemplate[] {
    return this.listedTemplates;
  }

  revision(): { prompts: number; resources: number } {
    return { ...this.rev };
  }

  ownsUri(uri: string): boolean {
    return uri.startsWith(uriPrefix(this.id)) || uri.startsWith(viewPrefix(this.id));
  }

  /**
   * The upstream's tools as listed now: the views they name are read again when that set changed (at a
   * connect the resources' listing reads them anyway).
   */
  noteTools(tools: readonly ToolDefinition[]): void {
    if (!this.views.noteTools(tools) || this.rev.resources === 0) return;
    this.wanted.add('views');
    void this.lister.kick();
  }

  /** Remembers a URI of the upstream's that a result handed to a client, so a read of it is one the upstream offered. */
  readonly handedOut = (uri: string): void => {
    this.handed.delete(uri);
    this.handed.add(uri);
    if (this.handed.size > MAX_HANDED_URIS) this.handed.delete(this.handed.values().next().value!);
  };

  /** Whether the upstream offered this URI of its own: listed, an expansion of a listed template, or handed out in a result. */
  private offersUri(own: string): boolean {
    const wrapped = wrapUri(this.id, own);
    return (
      this.handed.has(own) ||
      this.listedResources.some((r) => r.uri === wrapped) ||
      this.listedTemplates.some((t) => matchesTemplate(t.uriTemplate, wrapped))
    );
  }

  ownsPrompt(name: string): boolean {
    const own = ownPromptName(this.id, name);
    return own !== null && this.listedPrompts.some((p) => p.name === name);
  }

  /** Re-lists what changed (everything after a connect); one listing at a time, at most one more queued, errors logged. */
  refresh(what: 'connected' | 'prompts' | 'resources'): Promise<void> {
    this.wanted.add(what);
    return this.lister.kick();
  }

  private async listWanted(): Promise<void> {
    const wanted = this.wanted;
    this.wanted = new Set();
    if (!wanted.size) return;
    const prompts = wanted.has('connected') || wanted.has('prompts');
    const resources = wanted.has('connected') || wanted.has('resources');
    try {
      if (prompts || resources) {
        const caps = await this.connection.request(async (c) => c.getServerCapabilities() ?? {});
        this.offered = {
          completions: caps.completions !== undefined,
          subscribe: (caps.resources as { subscribe?: unknown } | undefined)?.subscribe === true,
          // a 2026-07-28 upstream has no logging/setLevel to send a level to (that revision names it per request)
          logging: caps.logging !== undefined && this.connection.snapshot().era !== '2026',
        };
        // a new session of the upstream knows no level: the one clients asked for is sent again
        if (wanted.has('connected')) {
          this.sentLevel = null;
          await this.sendLevel().catch((e: unknown) => this.failed('logging/setLevel', e));
        }
        // a new session of the upstream knows none of the subscriptions clients hold: they are made again
        if (wanted.has('connected') && this.offered.subscribe)
          for (const own of this.subscribed.keys())
            await this.connection
              .request((c, o) => c.subscribeResource({ uri: own }, o))
              .catch((e: unknown) => this.failed(`subscription to ${own.slice(0, 200)}`, e));
        // One failing list (a server that declares prompts and answers -32601) leaves the other's listing alone.
        if (prompts)
          await this.listPrompts(caps.prompts !== undefined).catch((e: unknown) => this.failed('prompts', e));
        if (resources)
          await this.listResources(caps.resources !== undefined).catch((e: unknown) => this.failed('resources', e));
      }
      // Its views are read again with the resources, or when the tools naming them changed (noteTools).
      if (resources || wanted.has('views')) await this.views.refresh().catch((e: unknown) => this.failed('views', e));
      this.deps.changed();
    } catch (e) {
      this.failed('prompts and resources', e);
    }
  }

  async getPrompt(name: string, args: Record<string, string>, ctx: CallContext): Promise<Record<string, unknown>> {
    const own = ownPromptName(this.id, name);
    // A prompt not offered (quarantined, hidden, never listed) answers like one that does not exist.
    if (own === null || !this.ownsPrompt(name))
      throw new GatehouseError('not_found', `prompt not found: ${name.slice(0, 128)}`);
    const r = await this.connection.request((c, o) => c.getPrompt({ name: own, arguments: args }, o), ctx.signal);
    const messages = (r.messages ?? []).map((m) => ({
      ...m,
      content: wrapBlockUris(this.id, m.content, this.handedOut),
    }));
    return { ...opt('description', text(r.description, 10_000)), messages };
  }

  offers(): SurfaceOffers {
    return { ...this.offered };
  }

  instructions(): string | null {
    return this.deps.instructions?.() ?? null;
  }

  /**
   * completion/complete sent to the upstream under its own prompt name or template URI; the values come back masked
   * like any answer (connection.ts) and bounded as the protocol bounds them (100 values).
   */
  async complete(request: CompletionRequest, ctx: CallContext): Promise<Record<string, unknown>> {
    const { ref } = request;
    const own =
      ref.type === 'ref/prompt'
        ? this.ownsPrompt(ref.name)
          ? ownPromptName(this.id, ref.name)
          : null
        : this.listedTemplates.some((t) => t.uriTemplate === ref.uri)
          ? unwrapUri(this.id, ref.uri)
          : null;
    if (own === null)
      throw new GatehouseError(
        'not_found',
        `${ref.type === 'ref/prompt' ? 'prompt' : 'resource template'} not found: ${(ref.type === 'ref/prompt' ? ref.name : ref.uri).slice(0, 300)}`,
        ref.type === 'ref/prompt' ? { name: ref.name.slice(0, 128) } : { uri: ref.uri.slice(0, 300) },
      );
    const r = await this.connection.request(
      (c, o) =>
        c.complete(
          {
            ref: ref.type === 'ref/prompt' ? { type: 'ref/prompt', name: own } : { type: 'ref/resource', uri: own },
            argument: request.argument,
            ...(request.context ? { context: request.context } : {}),
          },
          o,
        ),
      ctx.signal,
    );
    const c = r.completion;
    return {
      completion: {
        values: (c?.values ?? []).filter((v): v is string => typeof v === 'string').slice(0, 100),
        ...(typeof c?.total === 'number' ? { total: c.total } : {}),
        ...(typeof c?.hasMore === 'boolean' ? { hasMore: c.hasMore } : {}),
      },
    };
  }

  /**
   * resources/subscribe of one of its resources for `holder` (a client's token or listen stream): the upstream is
   * subscribed once, under its own URI, whoever else holds it; the URI must be one it offered, as for a read.
   */
  async subscribe(uri: string, holder: string, ctx: CallContext): Promise<void> {
    const own = unwrapUri(this.id, uri);
    if (own === null || !this.offersUri(own))
      throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`, { uri: uri.slice(0, 300) });
    const holders = this.subscribed.get(own);
    if (holders) return void holders.add(holder);
    if (this.subscribed.size >= MAX_SUBSCRIBED)
      throw new GatehouseError(
        'invalid_params',
        `upstream '${this.id}' is subscribed to ${MAX_SUBSCRIBED} resources for clients already; unsubscribe from one first`,
      );
    await this.connection.request((c, o) => c.subscribeResource({ uri: own }, o), ctx.signal);
    this.subscribed.set(own, new Set([holder]));
  }

  /** Drops `holder`'s subscription; the upstream's own ends with its last holder. */
  async unsubscribe(uri: string, holder: string): Promise<void> {
    const own = unwrapUri(this.id, uri);
    const holders = own === null ? undefined : this.subscribed.get(own);
    if (!holders || !holders.delete(holder) || holders.size) return;
    this.subscribed.delete(own!);
    await this.connection
      .request((c, o) => c.unsubscribeResource({ uri: own! }, o))
      .catch((e: unknown) => this.failed(`unsubscribe of ${own!.slice(0, 200)}`, e));
  }

  /**
   * A client's logging/setLevel: sent on when the upstream offers logging. The upstream serves every client
   * on one session, so it is sent the most verbose level any of them asked for; the gateway filters each
   * client's messages by its own (main/mcp/upstream-logs.ts).
   */
  async setLogLevel(holder: string, level: string): Promise<void> {
    if (!isLogLevel(level)) return;
    this.levels.delete(holder);
    this.levels.set(holder, level);
    // the tokens that asked are kept, bounded: the oldest one's level stops counting
    if (this.levels.size > MAX_LEVEL_HOLDERS) this.levels.delete(this.levels.keys().next().value!);
    await this.sendLevel();
  }

  private async sendLevel(): Promise<void> {
    if (!this.offered.logging || !this.levels.size) return;
    const wanted = LOG_LEVELS[Math.min(...[...this.levels.values()].map((l) => LOG_LEVELS.indexOf(l)))]!;
    if (wanted === this.sentLevel) return;
    await this.connection.request((c, o) => c.setLoggingLevel(wanted, o));
    this.sentLevel = wanted;
  }

  /** The upstream's notifications/resources/updated: passed on under the client's URI, for a resource clients hold. */
  updated(own: string): void {
    if (this.subscribed.has(own)) this.deps.updated?.(wrapUri(this.id, own));
  }

  async readResource(uri: string, ctx: CallContext): Promise<Record<string, unknown>> {
    const own = unwrapUri(this.id, uri);
    // A view (under either prefix) is served only as its pin allows (upstream-views.ts).
    if (own?.startsWith(VIEW_SCHEME)) return this.views.readFor(own, uri, ctx);
    // Only what the upstream offered is passed on: any other URI after the prefix could reach what it never meant to serve.
    if (own === null || !this.offersUri(own))
      throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`, { uri: uri.slice(0, 300) });
    const r = await this.connection.request(
      (c, o) => c.readResource({ uri: own }, { ...o, cacheMode: 'bypass' }),
      ctx.signal,
    );
    // The contents name the URI the client asked by; another URI of the upstream's, wrapped as well.
    return {
      contents: (r.contents ?? []).map((c) => ({
        ...c,
        uri: c.uri === own ? uri : usableUri(c.uri) ? (this.handedOut(c.uri), wrapUri(this.id, c.uri)) : uri,
      })),
    };
  }

  private async listPrompts(offered: boolean): Promise<void> {
    const listed = offered
      ? await this.all('prompts', (c, cursor, o) =>
          c.listPrompts(cursor ? { cursor } : undefined, { ...o, cacheMode: 'bypass' }),
        )
      : [];
    const problems: string[] = [];
    const seen = new Set<string>();
    const defs: PromptDefinition[] = [];
    for (const raw of listed as Array<Record<string, unknown>>) {
      const own = typeof raw.name === 'string' ? raw.name : '';
      const name = namespaced(this.id, own);
      if (!TOOL_NAME.test(name))
        problems.push(
          `prompt ${name.slice(0, 140)}: not offered: a prompt name is 1-128 of A-Z a-z 0-9 _ - . with the upstream id`,
        );
      else if (seen.has(name)) problems.push(`prompt ${name}: not offered: the upstream lists it twice`);
      else {
        seen.add(name);
        defs.push(promptDefinitionOf(own, raw));
      }
    }
    this.set('prompts', problems);
    this.listedDefs = defs;
    await this.deps.pins.pin(defs);
    this.offer();
    this.rev.prompts++;
  }

  /** The prompts of the last listing, under the upstream's own names (null before one): `add` pins them. */
  listedPromptDefinitions(): readonly PromptDefinition[] | null {
    return this.listedDefs;
  }

  /** Pins the last listing again (the record was stored after it arrived). */
  async repin(): Promise<void> {
    if (this.listedDefs) await this.deps.pins.pin(this.listedDefs);
    const views = this.views.listedDefinitions();
    if (views) await this.deps.views.pin(views);
    this.offer();
  }

  /** Waits for the listings queued so far. */
  settled(): Promise<void> {
    return this.lister.settled();
  }

  /**
   * Offers the approved prompts of the last listing (none before one, as
   * before prompts were pinned); after a review, a change of what is offered
   * counts as a new revision, so clients hear list_changed. True when it changed.
   */
  offer(): boolean {
    // The views listed follow their pins too: one approved, hidden or waiting anew changes resources/list.
    const views = JSON.stringify(this.views.resources());
    const viewsChanged = views !== this.offeredViews;
    if (viewsChanged) {
      this.offeredViews = views;
      this.rev.resources++;
    }
    const next =
      this.listedDefs === null
        ? []
        : (this.deps.pins.read() ?? []).filter(isOffered).map((p) => listedPrompt(this.id, p));
    if (JSON.stringify(next) === JSON.stringify(this.listedPrompts)) return viewsChanged;
    this.listedPrompts = next;
    this.rev.prompts++;
    return true;
  }

  private async listResources(offered: boolean): Promise<void> {
    const resources = offered
      ? await this.all('resources', (c, cursor, o) =>
          c.listResources(cursor ? { cursor } : undefined, { ...o, cacheMode: 'bypass' }),
        )
      : [];
    const templates = offered
      ? await this.all('resourceTemplates', (c, cursor, o) =>
          c.listResourceTemplates(cursor ? { cursor } : undefined, { ...o, cacheMode: 'bypass' }),
        )
      : [];
    const problems: string[] = [];
    const seen = new Set<string>();
    const described = (raw: Record<string, unknown>) => ({
      name: text(raw.name, 200) ?? '',
      ...opt('title', text(raw.title, 200)),
      ...opt('description', text(raw.description, 10_000)),
      ...opt('mimeType', text(raw.mimeType, 200)),
    });
    const out: ListedResource[] = [];
    // Its views are listed apart, as their pins allow.
    for (const raw of this.views.noteResources(resources as Array<Record<string, unknown> & { uri: unknown }>)) {
      if (!usableUri(raw.uri))
        problems.push(
          `resource ${String(raw.uri).slice(0, 200)}: not offered: not a usable URI (1-2048 characters, no spaces or control characters)`,
        );
      else if (seen.has(raw.uri))
        problems.push(`resource ${raw.uri.slice(0, 200)}: not offered: the upstream lists it twice`);
      else {
        seen.add(raw.uri);
        out.push({
          uri: wrapUri(this.id, raw.uri),
          ...described(raw),
          ...(typeof raw.size === 'number' ? { size: raw.size } : {}),
          ...(raw._meta && typeof raw._meta === 'object' && !Array.isArray(raw._meta)
            ? { _meta: raw._meta as Record<string, unknown> }
            : {}),
        });
      }
    }
    const tpl: ListedTemplate[] = [];
    for (const raw of templates as Array<Record<string, unknown>>) {
      if (!usableUri(raw.uriTemplate))
        problems.push(
          `resource template ${String(raw.uriTemplate).slice(0, 200)}: not offered: not a usable URI template`,
        );
      else tpl.push({ uriTemplate: wrapUri(this.id, raw.uriTemplate), ...described(raw) });
    }
    this.set('resource', problems);
    this.listedResources = out;
    this.listedTemplates = tpl;
    this.rev.resources++;
  }

  private failed(what: string, e: unknown): void {
    this.deps.log.warn(`upstream: listing its ${what} failed`, { upstream: this.id, error: (e as Error).message });
  }

  /** Every page of one list, bounded. */
  private async all<K extends string>(
    key: K,
    page: (c: Client, cursor: string | undefined, o: { timeout: number }) => Promise<Page<K>>,
  ): Promise<unknown[]> {
    const items: unknown[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < MAX_PAGES && items.length < MAX_ITEMS; i++) {
      const r = await this.connection.request((c, o) => page(c, cursor, o));
      items.push(...(r[key] ?? []));
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return items.slice(0, MAX_ITEMS);
  }

  /** Replaces the problems of one kind (prompt or resource), keeps the other's; logged when there are any. */
  private set(kind: 'prompts' | 'resource', problems: string[]): void {
    const other = kind === 'prompts' ? (p: string) => !p.startsWith('prompt ') : (p: string) => p.startsWith('prompt ');
    this.problems = this.problems.filter(other).concat(problems);
    if (problems.length)
      this.deps.log.warn('upstream: some prompts or resources cannot be offered', {
        upstream: this.id,
        problems: problems.slice(0, 20),
      });
  }
}
