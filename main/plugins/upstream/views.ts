import { createHash } from 'node:crypto';
import type { UpstreamViewView } from '../../contract/upstreams.ts';
import { LEGACY_RESOURCE_URI_KEY, VIEW_MIME, VIEW_SCHEME } from '../../contract/mcp-apps.ts';
import { compactDiff } from '../../lib/line-diff.ts';
import type { PinnedView, ViewDefinition } from './upstream-data.ts';
import { hashOf, pinView, reconcilePins, type PinKind, type Reconciled } from './pinning.ts';
import { usableUri } from './usable-uri.ts';

/**
 * An upstream's MCP App views (docs/upstreams.md, "MCP Apps"): HTML that runs
 * inside the person's AI host and may ask for network domains, the camera,
 * the microphone. Named per upstream inside `ui://`, pinned like a tool's
 * definition: its bytes (by hash) and its `_meta.ui` (what it asks for).
 */

/** The most one view may be (its text, or its blob decoded): larger ones are not pinned or served. */
export const MAX_VIEW_BYTES = 4 * 1024 * 1024;
/** The most views one upstream may have pinned (each is read at every listing). */
export const MAX_VIEWS = 100;

/**
 * `ui://<upstream id>/` followed by the upstream's own URI after its `ui://`:
 * `ui://get-time/mcp-app.html` of upstream `app` is `ui://app/get-time/mcp-app.html`.
 * The id is the authority, so nothing an upstream names can land in another's namespace.
 */
export const viewPrefix = (id: string): string => `${VIEW_SCHEME}${id}/`;

/**
 * Why an upstream's own view URI cannot be named for clients, or null. Beyond
 * a usable URI: dot segments, backslashes and encoded dots or slashes are
 * refused, since a client that normalizes the URI would read another one than
 * Gatehouse pinned (`ui://app/a/../b` is `ui://app/b` to a URL parser).
 */
export function viewUriProblem(own: unknown): string | null {
  if (typeof own !== 'string' || !own.startsWith(VIEW_SCHEME)) return 'a view URI starts with ui://';
  if (!usableUri(own)) return 'not a usable URI (1-2048 characters, no spaces or control characters)';
  const rest = own.slice(VIEW_SCHEME.length);
  if (!rest) return 'a view URI names something after ui://';
  if (/\\|%2e|%2f|%5c/i.test(rest)) return 'a view URI may not hold backslashes or encoded dots and slashes';
  const path = rest.split(/[?#]/, 1)[0]!;
  if (path.split('/').some((s) => s === '.' || s === '..')) return 'a view URI may not hold . or .. segments';
  return null;
}

export const wrapViewUri = (id: string, own: string): string => `${viewPrefix(id)}${own.slice(VIEW_SCHEME.length)}`;

/** The upstream's own view URI behind one of this upstream's `ui://<id>/...` URIs, or null. */
export function unwrapViewUri(id: string, uri: string): string | null {
  const prefix = viewPrefix(id);
  return uri.startsWith(prefix) && uri.length > prefix.length ? `${VIEW_SCHEME}${uri.slice(prefix.length)}` : null;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The view a tool's `_meta` names (`ui.resourceUri`, or the deprecated flat key), as the upstream wrote it. */
export function toolViewUri(meta: Record<string, unknown> | undefined): string | undefined {
  const ui = isObject(meta?.ui) ? meta.ui : undefined;
  const uri = ui?.resourceUri ?? meta?.[LEGACY_RESOURCE_URI_KEY];
  return typeof uri === 'string' ? uri : undefined;
}

/**
 * A tool's `_meta` for clients: the upstream's own, its view named inside
 * `ui://<id>/`, or left out (`resourceUri` and the flat key dropped, the rest
 * kept) while the view cannot be served: a URI refused, a view waiting for
 * its first approval. A host then shows the tool's text result, as for a
 * server without views.
 */
export function toolMetaForClients(
  id: string,
  meta: Record<string, unknown> | undefined,
  served: (own: string) => boolean,
): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  const own = toolViewUri(meta);
  const named = own !== undefined && viewUriProblem(own) === null && served(own) ? wrapViewUri(id, own) : null;
  const out: Record<string, unknown> = { ...meta };
  if (isObject(meta.ui)) {
    const { resourceUri: _, ...ui } = meta.ui;
    out.ui = named ? { ...ui, resourceUri: named } : ui;
  }
  if (meta[LEGACY_RESOURCE_URI_KEY] !== undefined) {
    if (named) out[LEGACY_RESOURCE_URI_KEY] = named;
    else delete out[LEGACY_RESOURCE_URI_KEY];
  }
  return out;
}

/** The content of a resources/read, as one view: its text (or blob), mimeType and `_meta.ui`, or why it is not one. */
export function viewOf(
  own: string,
  contents: ReadonlyArray<Record<string, unknown>>,
  listedUi: unknown,
): { view: ViewDefinition } | { problem: string; oversized?: true } {
  const c = contents.find((x) => x.uri === own) ?? contents[0];
  if (!c) return { problem: 'the upstream answered no content' };
  const text = typeof c.text === 'string' ? c.text : undefined;
  const blob = typeof c.blob === 'string' ? c.blob : undefined;
  if (text === undefined && blob === undefined) return { problem: 'the upstream answered neither text nor blob' };
  const bytes = text !== undefined ? Buffer.byteLength(text, 'utf8') : Buffer.from(blob!, 'base64').length;
  if (bytes > MAX_VIEW_BYTES) return { problem: tooLarge(bytes), oversized: true };
  const mimeType = typeof c.mimeType === 'string' ? c.mimeType.slice(0, 200) : VIEW_MIME;
  const contentUi = isObject(c._meta) ? c._meta.ui : undefined;
  // What the view asks for: the content's own `_meta.ui` (where the spec puts it), over what its listing said.
  const ui =
    isObject(listedUi) || isObject(contentUi) ? { ...(listedUi as object), ...(contentUi as object) } : undefined;
  const sha = `sha256:${createHash('sha256')
    .update(text ?? Buffer.from(blob!, 'base64'))
    .digest('hex')}`;
  return {
    view: {
      name: own,
      mimeType,
      ...(ui ? { ui } : {}),
      content_hash: sha,
      size: bytes,
      ...(text !== undefined ? { text } : { blob: blob! }),
    },
  };
}

export const tooLarge = (bytes: number): string =>
  `the view is ${(bytes / 1024 / 1024).toFixed(1)} MiB, more than the ${MAX_VIEW_BYTES / 1024 / 1024} MiB a view may be`;

/** What is hashed of a view: its URI, type, what it asks for and its bytes' hash (the bytes themselves are kept to serve and diff). */
const pinned = (d: ViewDefinition) => ({
  name: d.name,
  mimeType: d.mimeType,
  ...(d.ui !== undefined ? { ui: d.ui } : {}),
  content_hash: d.content_hash,
});

export const viewHash = (d: ViewDefinition): string => hashOf(pinned(d));

const VIEWS: PinKind<ViewDefinition, PinnedView> = {
  hash: viewHash,
  fresh: (name) => ({ name, approved: null, pending: null, hidden: false, removed: false }),
  reason: () => 'changed',
};

export const reconcileViews = (
  pins: readonly PinnedView[],
  listed: readonly ViewDefinition[],
): Reconciled<PinnedView> => reconcilePins(pins, listed, VIEWS);

/** One view read again (a client's read): its pin set against what the upstream serves now; the others as they were. */
export function observeView(pins: readonly PinnedView[], seen: ViewDefinition): PinnedView[] {
  const pin = pins.find((p) => p.name === seen.name);
  if (!pin) return [...pins];
  const [next] = reconcilePins([pin], [seen], VIEWS).pins;
  return pins.map((p) => (p === pin ? next! : p));
}

/** The HTML of a view definition, for the diff (a blob decoded as UTF-8). */
const htmlOf = (d: ViewDefinition | undefined): string =>
  d ? (d.text ?? Buffer.from(d.blob ?? '', 'base64').toString('utf8')) : '';

/** What the view asks the host for, in words: each CSP domain list and each permission (docs/upstreams.md, "MCP Apps"). */
export function viewAsks(ui: unknown): string[] {
  if (!isObject(ui)) return [];
  const out: string[] = [];
  const csp = isObject(ui.csp) ? ui.csp : {};
  for (const [k, v] of Object.entries(csp))
    if (Array.isArray(v) && v.length)
      out.push(
        `${k}: ${v
          .slice(0, 20)
          .map((d) => String(d).slice(0, 200))
          .join(' ')}${v.length > 20 ? ` (+${v.length - 20})` : ''}`,
      );
  const perms = isObject(ui.permissions) ? Object.keys(ui.permissions) : [];
  if (perms.length) out.push(`permissions: ${perms.slice(0, 20).join(', ')}`);
  if (typeof ui.domain === 'string') out.push(`domain: ${ui.domain.slice(0, 200)}`);
  return out;
}

export function viewView(upstream: string, pin: PinnedView): UpstreamViewView {
  const def = pin.pending?.definition ?? pin.approved?.definition;
  const base = pinView(upstream, pin, ['mimeType', 'ui', 'content_hash']);
  const diff = pin.pending
    ? compactDiff(htmlOf(pin.approved?.definition), htmlOf(pin.pending.definition), { maxLines: 200 })
    : null;
  return {
    ...base,
    name: wrapViewUri(upstream, pin.name),
    view: pin.name,
    title: null,
    description: null,
    size: def?.size ?? 0,
    asks: viewAsks(def?.ui),
    html_diff: diff ? { before: diff.before, after: diff.after, changed_lines: diff.changed_lines } : null,
  };
}
