/**
 * The MCP Apps extension (SEP-1865, `io.modelcontextprotocol/ui`): an
 * upstream's tool names an HTML view in `_meta.ui.resourceUri`, a `ui://`
 * resource that hosts declaring the extension render in a sandboxed frame
 * (docs/upstreams.md, "MCP Apps").
 */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The one view type of the extension: what a view's resources/read answers as its mimeType. */
export const VIEW_MIME = 'text/html;profile=mcp-app';
export const VIEW_SCHEME = 'ui://';
/** The deprecated flat key some servers still send beside `_meta.ui.resourceUri` (the SDK's own helper does). */
export const LEGACY_RESOURCE_URI_KEY = 'ui/resourceUri';

/** Whether a client's declared capabilities say it renders views (the extension, with the view type among its mimeTypes). */
export function rendersViews(capabilities: Readonly<Record<string, unknown>> | undefined): boolean {
  const ext = (capabilities?.extensions as Record<string, unknown> | undefined)?.[UI_EXTENSION] as
    { mimeTypes?: unknown } | undefined;
  return !!ext && Array.isArray(ext.mimeTypes) && ext.mimeTypes.includes(VIEW_MIME);
}

/** A tool's `_meta.ui.visibility` without "model": offered to a view, never to the model. */
export function appOnly(meta: Readonly<Record<string, unknown>> | undefined): boolean {
  const v = (meta?.ui as { visibility?: unknown } | undefined)?.visibility;
  return Array.isArray(v) && !v.includes('model');
}
