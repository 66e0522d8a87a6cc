import type { CallContext } from '../../core/calls/tool.ts';
import type { ListedResource } from '../../core/calls/surface.ts';
import { GatehouseError } from '../../core/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { UpstreamConnection } from './connection.ts';
import type { PinnedView, ToolDefinition, ViewDefinition } from './upstream-data.ts';
import {
  MAX_VIEW_BYTES,
  MAX_VIEWS,
  tooLarge,
  toolViewUri,
  viewHash,
  viewOf,
  viewUriProblem,
  wrapViewUri,
} from './views.ts';

export interface ViewDeps {
  log: Logger;
  /** the view pins in the upstream's record, pinning a fresh reading of them (saved), and one view read again */
  pins: {
    read(): readonly PinnedView[];
    pin(defs: readonly ViewDefinition[]): Promise<void>;
    observe(def: ViewDefinition): Promise<void>;
  };
}

/** A `ui://` resource the upstream listed: its name and what its listing said it asks for. */
interface ListedView {
  own: string;
  name: string;
  title?: string;
  description?: string;
  size?: number;
  ui?: unknown;
}

/**
 * An upstream's MCP App views (views.ts; docs/upstreams.md, "MCP Apps"): the
 * `ui://` resources it lists and those its tools name, read at every listing
 * and pinned. A view is served under `ui://<id>/...` only while a person's
 * approval covers it: the upstream's bytes when they are the approved ones,
 * the approved bytes while a changed view waits for review, and a clear
 * refusal for one never approved.
 */
export class UpstreamViews {
  /** own URIs that could not be pinned at the last reading, with why (for people) */
  problems: string[] = [];
  private listed: ListedView[] = [];
  private toolUris: string[] = [];
  private defs: ViewDefinition[] | null = null;
  /**
   * Views whose read ended the upstream's connection, was refused as an answer over 16 MiB (stdio-transport.ts),
   * or answered more than a view may be: read again, each listing would cost that again, so they are not read
   * again while the service runs.
   */
  private readonly unreadable = new Map<string, string>();

  constructor(
    private readonly id: string,
    private readonly connection: UpstreamConnection,
    private readonly deps: ViewDeps,
  ) {}

  /** The upstream's tools as listed now (approved or not): the views they name are read at the next reading. */
  noteTools(tools: readonly ToolDefinition[]): boolean {
    const uris = [...new Set(tools.map((t) => toolViewUri(t._meta)).filter((u): u is string => u !== undefined))];
    const changed = uris.join('\n') !== this.toolUris.join('\n');
    this.toolUris = uris;
    return changed;
  }

  /** The `ui://` resources of a resources/list, apart from the others (returned). */
  noteResources<R extends Record<string, unknown> & { uri: unknown }>(resources: readonly R[]): R[] {
    const views: ListedView[] = [];
    const rest: R[] = [];
    for (const r of resources) {
      if (typeof r.uri === 'string' && r.uri.startsWith('ui://')) {
        const raw: Record<string, unknown> = r;
        const text = (k: string, max: number) =>
          typeof raw[k] === 'string' ? (raw[k] as string).slice(0, max) : undefined;
        const meta = raw._meta as { ui?: unknown } | undefined;
        views.push({
          own: r.uri,
          name: text('name', 200) ?? '',
          ...(text('title', 200) !== undefined ? { title: text('title', 200)! } : {}),
          ...(text('description', 10_000) !== undefined ? { description: text('description', 10_000)! } : {}),
          ...(typeof raw.size === 'number' ? { size: raw.size } : {}),
          ...(meta && typeof meta === 'object' && meta.ui !== undefined ? { ui: meta.ui } : {}),
        });
      } else rest.push(r);
    }
    this.listed = views;
    return rest;
  }

  /** Reads every view named (listed or in a tool's `_meta`), bounded, and pins the reading. */
  async refresh(): Promise<void> {
    const problems: string[] = [];
    const uris = [...new Set([...this.listed.map((v) => v.own), ...this.toolUris])];
    const defs: ViewDefinition[] = [];
    const before = new Map(this.deps.pins.read().map((p) => [p.name, p]));
    for (const own of uris) {
      const problem = viewUriProblem(own);
      if (problem) {
        problems.push(`view ${own.slice(0, 200)}: not offered: ${problem}`);
        continue;
      }
      if (defs.length >= MAX_VIEWS) {
        problems.push(`view ${own.slice(0, 200)}: not offered: more than the ${MAX_VIEWS} views one upstream may have`);
        continue;
      }
      const listed = this.listed.find((v) => v.own === own);
      if (listed?.size !== undefined && listed.size > MAX_VIEW_BYTES) {
        problems.push(`view ${own.slice(0, 200)}: not offered: ${tooLarge(listed.size)} (its listed size; not read)`);
        continue;
      }
      const why = this.unreadable.get(own);
      if (why) {
        const kept = before.get(own);
        const d = kept?.pending?.definition ?? kept?.approved?.definition;
        problems.push(
          kept?.approved
            ? `view ${own.slice(0, 200)}: ${why}; the approved one is served`
            : `view ${own.slice(0, 200)}: not offered: ${why}`,
        );
        if (d) defs.push(d);
        continue;
      }
      const read = await this.read(own).catch((e: unknown) => {
        return { problem: this.endedConnection(own, e) ?? (e as Error).message.slice(0, 300), failed: true };
      });
      if ('problem' in read) {
        problems.push(`view ${own.slice(0, 200)}: not offered: ${read.problem}`);
        // Read whole (within the 16 MiB answer bound) only to be dropped: not again at every listing.
        if ('oversized' in read)
          this.unreadable.set(own, `${read.problem}: it is not read again while the service runs`);
        // A read that failed leaves its pin as it was (a slow upstream does not make a view removed); one the
        // upstream answered with something that is no view (too large, empty) is not pinned.
        const kept = before.get(own);
        const d = kept?.pending?.definition ?? kept?.approved?.definition;
        if (d && 'failed' in read) defs.push(d);
        continue;
      }
      defs.push(read.view);
    }
    this.problems = problems;
    if (problems.length)
      this.deps.log.warn('upstream: some views cannot be offered', {
        upstream: this.id,
        problems: problems.slice(0, 20),
      });
    this.defs = defs;
    await this.deps.pins.pin(defs);
  }

  /** The views of the last reading (null before one): `add` pins them. */
  listedDefinitions(): readonly ViewDefinition[] | null {
    return this.defs;
  }

  /** Whether a tool's `_meta` may name this view to clients: a person approved a version of it, and it is still named. */
  served(own: string): boolean {
    const pin = this.deps.pins.read().find((p) => p.name === own);
    return !!pin && !!pin.approved && !pin.hidden && !pin.removed;
  }

  /** The views resources/list shows: those the upstream listed, under `ui://<id>/...`, with what the approved one asks for. */
  resources(): ListedResource[] {
    return this.listed
      .filter((v) => this.served(v.own))
      .map((v) => {
        const pin = this.deps.pins.read().find((p) => p.name === v.own)!;
        const ui = pin.approved!.definition.ui;
        return {
          uri: wrapViewUri(this.id, v.own),
          name: v.name,
          ...(v.title !== undefined ? { title: v.title } : {}),
          ...(v.description !== undefined ? { description: v.description } : {}),
          mimeType: pin.approved!.definition.mimeType,
          ...(ui !== undefined ? { _meta: { ui } } : {}),
        };
      });
  }

  /**
   * resources/read of a view: what the upstream serves now when a person approved exactly that; while a
   * changed one waits, the approved bytes (the change is pinned as pending, and people see it); never
   * approved, hidden or no longer named: refused, saying why.
   */
  async readFor(own: string, uri: string, ctx: CallContext): Promise<Record<string, unknown>> {
    const pin = this.deps.pins.read().find((p) => p.name === own);
    if (!pin || pin.removed)
      throw new GatehouseError('not_found', `resource not found: ${uri.slice(0, 300)}`, { uri: uri.slice(0, 300) });
    if (pin.hidden || !pin.approved)
      throw new GatehouseError(
        'not_found',
        `the view ${uri.slice(0, 300)} is not offered: ${pin.hidden ? 'a person hid it' : 'it waits for a person to approve it'} (gatehouse upstreams review ${this.id})`,
        { uri: uri.slice(0, 300) },
      );
    // One whose read ends the connection is not asked again: the approved bytes stand for it.
    if (this.unreadable.has(own)) return { contents: [contentOf(uri, pin.approved.definition)] };
    // The upstream down or failing answers its own error, as any read does.
    const now = await this.read(own, ctx.signal).catch((e: unknown) => {
      this.endedConnection(own, e);
      throw e;
    });
    const approved = pin.approved.definition;
    if (!('problem' in now) && pin.approved.hash === viewHash(now.view))
      return { contents: [contentOf(uri, now.view)] };
    if ('problem' in now)
      this.deps.log.warn('upstream: a view could not be read', { upstream: this.id, view: own, problem: now.problem });
    else await this.deps.pins.observe(now.view);
    // Not what a person approved: the approved bytes, never the new ones.
    return { contents: [contentOf(uri, approved)] };
  }

  /** Notes a view whose read ended the connection or was too large to take, so it is not read again: why, or null. */
  private endedConnection(own: string, e: unknown): string | null {
    const ended =
      e instanceof GatehouseError && e.code === 'upstream_unavailable' && e.message.includes('during the call')
        ? ENDED
        : e instanceof GatehouseError && e.code === 'upstream_error' && typeof e.details.limit_bytes === 'number'
          ? TOO_LARGE
          : null;
    if (ended) {
      this.unreadable.set(own, ended);
      this.deps.log.warn('upstream: a view that cannot be read is not read again while the service runs', {
        upstream: this.id,
        view: own.slice(0, 200),
        why: ended,
      });
    }
    return ended;
  }

  private async read(
    own: string,
    signal?: AbortSignal,
  ): Promise<{ view: ViewDefinition } | { problem: string; oversized?: true }> {
    const r = await this.connection.request(
      (c, o) => c.readResource({ uri: own }, { ...o, cacheMode: 'bypass' }),
      signal,
    );
    const listed = this.listed.find((v) => v.own === own);
    return viewOf(own, (r.contents ?? []) as Array<Record<string, unknown>>, listed?.ui);
  }
}

const ENDED = "reading it ended the upstream's connection: it is not read again while the service runs";
const TOO_LARGE =
  'its answer was over the 16 MiB an upstream answer may be (refused, the upstream kept running): it is not read again while the service runs';

function contentOf(uri: string, d: ViewDefinition): Record<string, unknown> {
  return {
    uri,
    mimeType: d.mimeType,
    ...(d.text !== undefined ? { text: d.text } : { blob: d.blob }),
    ...(d.ui !== undefined ? { _meta: { ui: d.ui } } : {}),
  };
}
