import type { Capability } from '../contract/users.ts';
import type { CallContext } from './tool.ts';

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
}

/** A resource template as resources/templates/list shows it. */
export interface ListedTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/**
 * Prompts, resources and resource templates a plugin passes through from
 * elsewhere (an upstream MCP server), already under the names and URIs
 * clients see. Unlike a ResourceDef, a surface answers for every URI it
 * `owns` (a template's expansions, resources made at run time), and its
 * answers are the source's own JSON (several contents, blobs, messages).
 * Visibility is the plugin's as a whole: Registry.surfaces.
 */
export interface PluginSurface {
  /** what a caller needs to see any of it */
  readonly capability: Capability;
  /** the feature a get or read is gated on (entitlements); listing is not gated, as for tools */
  readonly feature: string;
  prompts(): readonly ListedPrompt[];
  resources(): readonly ListedResource[];
  templates(): readonly ListedTemplate[];
  /** changes whenever prompts (resp. resources or templates) may have changed: channels compare it to send list_changed */
  revision(): { prompts: number; resources: number };
  /** whether a resources/read of this URI is for this surface */
  ownsUri(uri: string): boolean;
  ownsPrompt(name: string): boolean;
  getPrompt(name: string, args: Record<string, string>, ctx: CallContext): Promise<Record<string, unknown>>;
  readResource(uri: string, ctx: CallContext): Promise<Record<string, unknown>>;
}
