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
