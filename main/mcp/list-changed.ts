import { createHash } from 'node:crypto';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import type { Settings } from '../contract/settings.ts';
import type { Registry, RegisteredTool, Viewer } from '../core/calls/registry.ts';
import type { ResourceDef } from '../core/calls/tool.ts';
import { listedTool, type ServerRegistry } from './server-factory.ts';
import { MAX_SUBSCRIPTIONS_PER_TOKEN, type TokenSubscriptions } from './resource-subscriptions.ts';
import { passes, type LogLevel, type LogMessage } from '../plugins/upstream/log-relay.ts';

export type ListKind = 'tools' | 'resources' | 'prompts';

/** Channels one token may hold open (a client that reconnects leaves one behind): a new one past this ends its oldest. */
export const MAX_STREAMS_PER_TOKEN = 4;
/** Channels in all. */
export const MAX_STREAMS = 256;

type Fingerprints = { tools: string; resources: string; prompts: string };

/** One open channel to a client that can take server notifications. */
export interface Listener {
  readonly tokenId: string;
  /** the upstream whose own endpoint (upstream-view.ts) the channel was opened on; none: the main endpoint */
  readonly view?: string;
  send(kind: ListKind): void;
  /** notifications/resources/updated of a resource it subscribed to */
  sendUpdated?(uri: string): void;
  /** an upstream's notifications/message (2025 era: the GET stream; a listen stream has no word for it) */
  sendLog?(message: LogMessage): void;
  /** a 2026-07-28 listen stream's own resource subscriptions; none: its token's (2025 era, resources/subscribe) */
  readonly resources?: ReadonlySet<string>;
  close(): void;
}

export interface ListChangesDeps {
  registry: Registry;
  settings: () => Settings;
  /** what a token sees now; null once it is revoked (its channels are closed) */
  viewerOf: (tokenId: string) => Viewer | null;
  /** the lists of one upstream's own endpoint (upstream-view.ts); without it a view's channel hears the main endpoint's */
  viewRegistry?: (view: string) => ServerRegistry;
  /** the policy's revision (policy-listing.ts): tools/list asks the policy, so a new policy may change every list */
  policyRevision?: () => number;
  /** a revoked token's 2025-era resource subscriptions let go at their upstreams (its streams are closed with it) */
  releaseSubscriptions?: (tokenId: string, uris: string[]) => void;
}

/**
 * Tells connected clients when the tools or resources they may see change,
 * and only those whose view did change: a plugin adds or drops a tool, a
 * setting (`approval_mode`, `disabled_tools`) hides or shows one. Each
 * channel remembers a fingerprint of its token's visible lists, as its
 * endpoint lists them (an upstream's own endpoint shows that upstream's
 * part), made of what the client is shown: a plugin that lists the same
 * tools again is no change. After every change the fingerprints are
 * recomputed and the channels whose lists differ get
 * `notifications/{tools,resources}/list_changed`.
 *
 * Which clients can hear it, per protocol era (SDK v2 `createMcpHandler`):
 * - 2026-07-28: a client opens `subscriptions/listen` (the SDK client does so
 *   itself when given `listChanged` handlers); the SDK serves that stream and
 *   takes its events from a bus, which `bus` here provides.
 * - 2025 era: notifications arrive on the Streamable HTTP GET stream. The
 *   SDK's stateless legacy leg answers GET with 405, so the endpoint serves
 *   that stream itself (see event-stream.ts) and attaches it here.
 * A client that opens neither hears nothing and sees the change at its next
 * tools/list.
 */
export class ListChanges {
  private readonly channels = new Map<Listener, Fingerprints>();
  private readonly digests = new WeakMap<object, string>();
  private pending = false;
  /** each token's resource subscriptions (2025 era) */
  private readonly held = new Map<string, Set<string>>();
  /** the log level each token set (2025 era, logging/setLevel); none: every level */
  private readonly levels = new Map<string, LogLevel>();

  /** A token's logging/setLevel: its channels hear upstreams' messages at that level or above. */
  setLogLevel(tokenId: string, level: LogLevel): void {
    this.levels.delete(tokenId);
    this.levels.set(tokenId, level);
    if (this.levels.size > MAX_LEVELS) this.levels.delete(this.levels.keys().next().value!);
  }

  readonly subscriptions: TokenSubscriptions = {
    add: (tokenId, uri) => {
      const mine = this.held.get(tokenId) ?? new Set<string>();
      if (!mine.has(uri) && mine.size >= MAX_SUBSCRIPTIONS_PER_TOKEN) return false;
      this.held.set(tokenId, mine.add(uri));
      return true;
    },
    remove: (tokenId, uri) => {
      const mine = this.held.get(tokenId);
      mine?.delete(uri);
      if (mine?.size === 0) this.held.delete(tokenId);
    },
    has: (tokenId, uri) => this.held.get(tokenId)?.has(uri) ?? false,
  };

  constructor(private readonly deps: ListChangesDeps) {}

  /**
   * Makes `listener` a channel. The bounds are kept here, at the moment a
   * channel becomes one, not only by a check before its stream is served: a
   * `subscriptions/listen` stream subscribes only after the SDK has done some
   * work, so many listens sent at once all passed a check made before (one
   * token held 40 streams, and could have held every connection the service
   * accepts). Past the token's bound its oldest channels end; past the
   * service's, the new one ends.
   */
  attach(listener: Listener): () => void {
    const viewer = this.deps.viewerOf(listener.tokenId);
    if (!viewer) {
      listener.close();
      return () => {};
    }
    while (this.countFor(listener.tokenId) >= MAX_STREAMS_PER_TOKEN) {
      const oldest = this.oldestFor(listener.tokenId)!;
      this.channels.delete(oldest);
      oldest.close();
    }
    if (this.channels.size >= MAX_STREAMS) {
      listener.close();
      return () => {};
    }
    this.channels.set(listener, this.fingerprints(viewer, listener.view));
    return () => this.channels.delete(listener);
  }

  /** Whether a new channel of this token would be kept: room in all, or one of its own to replace. */
  hasRoomFor(tokenId: string): boolean {
    return this.channels.size < MAX_STREAMS || this.countFor(tokenId) >= MAX_STREAMS_PER_TOKEN;
  }

  /** Open channels, per token (to bound how many one token may hold). */
  countFor(tokenId: string): number {
    let n = 0;
    for (const l of this.channels.keys()) if (l.tokenId === tokenId) n++;
    return n;
  }

  oldestFor(tokenId: string): Listener | undefined {
    for (const l of this.channels.keys()) if (l.tokenId === tokenId) return l;
    return undefined;
  }

  get size(): number {
    return this.channels.size;
  }

  /** Something may have changed what some token sees; checked once per turn of the event loop. */
  changed(): void {
    if (this.pending || (this.channels.size === 0 && this.held.size === 0)) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      this.check();
    });
  }

  /** An upstream's resource was updated: the channels subscribed to it hear notifications/resources/updated. */
  resourceUpdated(uri: string): void {
    for (const l of [...this.channels.keys()]) {
      const subscribed = l.resources ? l.resources.has(uri) : this.subscriptions.has(l.tokenId, uri);
      if (!subscribed || !this.deps.viewerOf(l.tokenId)) continue;
      try {
        l.sendUpdated?.(uri);
      } catch {
        this.channels.delete(l);
        l.close();
      }
    }
  }

  logLevelOf(tokenId: string): LogLevel | undefined {
    return this.levels.get(tokenId);
  }

  /** An upstream's log message: the channels of the tokens that see that upstream hear it, at their level. */
  logMessage(upstream: string, message: LogMessage): void {
    for (const l of [...this.channels.keys()]) {
      if (!l.sendLog || (l.view !== undefined && l.view !== upstream)) continue;
      if (!passes(message.level, this.levels.get(l.tokenId))) continue;
      const viewer = this.deps.viewerOf(l.tokenId);
      if (!viewer || !this.deps.registry.surfaces(viewer).some((s) => s.plugin === upstream)) continue;
      try {
        l.sendLog(message);
      } catch {
        this.channels.delete(l);
        l.close();
      }
    }
  }

  closeAll(): void {
    for (const l of [...this.channels.keys()]) l.close();
    this.channels.clear();
  }

  /**
   * The event bus of one `subscriptions/listen` request's handler (the endpoint gives each its own): the stream the
   * SDK opens for it subscribes here and becomes a channel of `tokenId` (on `view`'s endpoint); `end` cuts that
   * stream (token revoked); `resources` are the upstream resources it hears updates of (the endpoint holds and
   * releases them). A bus per request rather than one shared bus that asks whose request is running
   * (AsyncLocalStorage): that would put Node's promise hooks on every promise of the process.
   */
  busFor(tokenId: string, end: () => void, view?: string, resources?: ReadonlySet<string>): ServerEventBus {
    return {
      publish: () => {},
      subscribe: (deliver: (event: ServerEvent) => void) => {
        const listener: Listener = {
          tokenId,
          ...(view ? { view } : {}),
          send: (kind) => deliver({ kind: `${kind}_list_changed` }),
          sendUpdated: (uri) => deliver({ kind: 'resource_updated', uri }),
          ...(resources ? { resources } : {}),
          close: end,
        };
        return this.attach(listener);
      },
    };
  }

  /** The bus of the handler of every other request: none of them opens a stream, so nothing subscribes to it. */
  readonly quietBus: ServerEventBus = { publish: () => {}, subscribe: () => () => {} };

  private check(): void {
    // A revoked token's subscriptions are nobody's: held at the upstream, they would count against its bound for good.
    for (const [tokenId, uris] of [...this.held])
      if (!this.deps.viewerOf(tokenId)) {
        this.held.delete(tokenId);
        this.deps.releaseSubscriptions?.(tokenId, [...uris]);
      }
    for (const [listener, seen] of [...this.channels]) {
      const viewer = this.deps.viewerOf(listener.tokenId);
      if (!viewer) {
        this.channels.delete(listener);
        listener.close();
        continue;
      }
      const now = this.fingerprints(viewer, listener.view);
      this.channels.set(listener, now);
      try {
        if (now.tools !== seen.tools) listener.send('tools');
        if (now.resources !== seen.resources) listener.send('resources');
        if (now.prompts !== seen.prompts) listener.send('prompts');
      } catch {
        this.channels.delete(listener);
        listener.close();
      }
    }
  }

  /**
   * The visible lists as digests of what a client is shown of each entry
   * (a tool's listing, a resource's description), so re-registering the
   * same definitions changes nothing. Passed-through prompts and resources
   * (upstreams') count as their surface's revision, which changes when a
   * re-listing differs.
   */
  private fingerprints(viewer: Viewer, view?: string): Fingerprints {
    const settings = this.deps.settings();
    const lists: ServerRegistry = (view && this.deps.viewRegistry?.(view)) || this.deps.registry;
    const surfaces = this.deps.registry
      .surfaces(viewer)
      .filter((s) => view === undefined || s.plugin === view)
      .map((s) => ({ id: s.plugin, ...s.surface.revision() }));
    return {
      tools: `${this.deps.policyRevision?.() ?? 0}:${lists
        .visible(viewer, settings)
        .map((e) => this.digestOf(e, () => listedTool(e)))
        .join(',')}`,
      resources: lists
        .resources(viewer, settings)
        .map((r) => this.digestOf(r, () => resourceListing(r)))
        .concat(surfaces.map((s) => `${s.id}:${s.resources}`))
        .join(','),
      prompts: surfaces.map((s) => `${s.id}:${s.prompts}`).join(','),
    };
  }

  private digestOf(o: RegisteredTool | ResourceDef, listing: () => unknown): string {
    let d = this.digests.get(o);
    if (d === undefined) {
      d = createHash('sha256').update(JSON.stringify(listing())).digest('base64url').slice(0, 22);
      this.digests.set(o, d);
    }
    return d;
  }
}

/** Tokens whose log level is remembered (the oldest one's is forgotten past it: every level again). */
const MAX_LEVELS = 10_000;

const resourceListing = ({ uri, name, title, description, mimeType }: ResourceDef) => ({
  uri,
  name,
  title,
  description,
  mimeType,
});
