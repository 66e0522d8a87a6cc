/* The shapes a plugin's surface lists (PluginSurface, in tool.ts, is the plugin side). */

/** A prompt as prompts/list shows it, under the name clients use. */
export interface ListedPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: ReadonlyArray<{ name: string; description?: string; required?: boolean }>;
}

/** A resource as resources/list shows it, under the URI clients use. */
export interface ListedResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  /** the source's own metadata (an MCP App view's `ui`: what it asks the host for) */
  _meta?: Record<string, unknown>;
}

/** A resource template as resources/templates/list shows it. */
export interface ListedTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** What more a surface offers, as its source said at its last listing (an upstream's capabilities). */
export interface SurfaceOffers {
  /** completion/complete of its prompts' and resource templates' arguments */
  completions: boolean;
  /** resources/subscribe of its resources */
  subscribe: boolean;
  /** logging/setLevel (its `logging` capability): a level a client sets is sent on to it */
  logging?: boolean;
}

/** A completion/complete request, its ref in the names and URIs clients use. */
export interface CompletionRequest {
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}
