import type { Capability, User } from '../../contract/users.ts';
import type { TokenRecord } from '../../contract/tokens.ts';
import type { Preview } from '../../contract/staged.ts';
import type { ClientSource } from '../../contract/audit.ts';
import type { PluginInfo } from '../../contract/tools.ts';
import type { InferOutput, ToolSchema } from './tool-schema.ts';
import type { CompletionRequest, ListedPrompt, ListedResource, ListedTemplate, SurfaceOffers } from './surface.ts';

/** Who is calling, resolved from the bearer token before any tool runs. */
export interface CallContext {
  user: User;
  capabilities: ReadonlySet<Capability>;
  token: TokenRecord | null;
  /** a person confirming a write: the token of the agent that staged it (an upstream with one process per client applies it in that client's process) */
  staged_by_token?: string | null;
  request_id: string;
  client: string | null;
  /** how `client` is known (this request's clientInfo, or a guess) */
  client_source?: ClientSource | null;
  /** aborted when the client cancels or the call's time runs out: long work should stop then */
  signal?: AbortSignal;
  /** set when the client asked for progress (a progressToken): passes an upstream's progress on to it */
  progress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** what the calling client declared it can do (elicitation, sampling, ...): a tool that asks it for input checks here first */
  clientCapabilities?: Readonly<Record<string, unknown>>;
  /** asks the calling client now, in the middle of the call (2025-era clients only: a 2026-07-28 one is asked by an input-required answer) */
  ask?: (request: ClientAsk, signal?: AbortSignal) => Promise<Record<string, unknown>>;
  /** a retried call's answers to the input a previous round asked for, with that round's state (already verified and unwrapped) */
  resume?: {
    inputResponses?: Record<string, unknown>;
    requestState?: string;
    refused?: { message: string; reason: string };
  };
}

/** A request to the client on behalf of a tool: elicitation/create, sampling/createMessage. */
export interface ClientAsk {
  method: string;
  params: Record<string, unknown>;
}

/** MCP tool annotations (hints for clients). The title is the tool's own `title`, never set twice. */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** What a tool hands back; the MCP layer turns it into content + structuredContent. */
export interface ToolOutput {
  structured: Record<string, unknown>;
  /** human-readable text; defaults to pretty JSON of `structured` */
  text?: string;
  /** MCP content blocks as the tool's source gave them (an upstream server's): sent instead of `text` */
  content?: ReadonlyArray<Record<string, unknown>>;
  /** false: `structured` is kept (staged result, output check) but not sent as structuredContent (the source gave none) */
  sendStructured?: boolean;
  /** what an apply made, when the staged write could not name it before (a creation: "page:12"); audited with the confirm */
  target?: string;
  /**
   * Reads the target's version once applied, where the write's preview can
   * read it again (an upstream file's sha256), audited beside the version
   * before. Asked by staging only after the apply's result is kept, so a crash
   * during that read costs the audit this version, never the result.
   */
  versionAfter?: () => Promise<string | undefined>;
  /** the call needs the client's input first (MCP 2026-07-28 input_required): the embedded requests and the source's state, answered instead of a result */
  inputRequired?: { inputRequests: Record<string, ClientAsk>; requestState?: string };
  /** what was asked of the client during the call (methods and modes, never values): audited */
  asked?: string;
  /** the source's own result `_meta` (an upstream's), sent as it is: Gatehouse's keys go beside it, never in its place */
  meta?: Record<string, unknown>;
  /**
   * The source answered with an error result (an upstream's `isError: true`): its content, structured content and
   * `_meta` are sent as they came, `isError` set, and this code beside them in `_meta["gatehouse/error"]`; the call
   * is audited as an error with this code and its result is not checked against the output schema.
   */
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

/** What a write tool proposes instead of changing anything. */
export interface WritePlan {
  preview: Preview;
  /** normalized arguments that `apply` will receive */
  payload: Record<string, unknown>;
  /** what it touches, e.g. "page:12"; null when nothing exists yet */
  target: string | null;
  /** the target's version at preview time; null for creations */
  target_version: number | null;
}

interface ToolBase<S extends ToolSchema> {
  /** 1-128 of A-Z a-z 0-9 _ - . (the MCP tool name rule); unique across all plugins */
  name: string;
  title: string;
  description: string;
  /** a Standard Schema (e.g. zod) or a JSON Schema object; listed as JSON Schema, validated before the tool runs */
  input: S;
  /** when set, structured results are checked against it */
  output?: ToolSchema;
  capability: Capability;
  /** dotted feature key checked by the feature gate, e.g. "site.pages.write" */
  feature: string;
  /** owning plugin id */
  plugin: string;
  annotations?: ToolAnnotations;
  /** what a call names (e.g. "page:12"), from its validated input: the audit entry of every outcome records it */
  target?(input: InferOutput<S>): string | null;
  /** how long one call (or one preview) may take; the pipeline's default otherwise */
  timeout_ms?: number;
  /** it decides staged writes (the agent's confirm/discard): the policy's `decides_staged` (docs/policy.md) */
  decides_staged?: boolean;
  /** a tool from elsewhere (an upstream's): the hash of the definition a person approved; a staged write is bound to it */
  definition_hash?: string;
  /**
   * A tool from elsewhere: its own title and annotations exactly as its source sent them, listed to clients
   * instead of Gatehouse's (no title made up from the name, no readOnlyHint from the desk's classification,
   * which is a rule of the desk, not a claim to clients). Absent: built from `title`, `write` and `annotations`.
   * Its `_meta` is the source's own (an MCP App's `ui`), listed with Gatehouse's keys beside it; its `execution`
   * (task support) as the source sent it.
   */
  listed?: {
    title?: string;
    annotations?: Record<string, unknown>;
    _meta?: Record<string, unknown>;
    execution?: Record<string, unknown>;
  };
  /**
   * A tool its source lists only to clients that declare client capabilities (an upstream that offers a tool
   * needing sampling only when sampling was declared): the capability sets it was listed under, one of which a
   * client must have declared to be listed it. Absent: listed whatever the client declared.
   */
  listed_for?: ReadonlyArray<ReadonlyArray<ClientNeed>>;
}

/** A client capability a tool's source may list it under (docs/decisions.md, "Learn the sets by listing, not by guessing from schemas"). */
export type ClientNeed = 'sampling' | 'elicitation';

/** Whether a client that declared `capabilities` is listed a tool with these `listed_for` sets. */
export function clientMayUse(
  listedFor: ReadonlyArray<ReadonlyArray<ClientNeed>> | undefined,
  capabilities: Readonly<Record<string, unknown>> | undefined,
): boolean {
  if (!listedFor) return true;
  return listedFor.some((set) => set.every((need) => capabilities?.[need] !== undefined));
}

export interface ReadTool<S extends ToolSchema = ToolSchema> extends ToolBase<S> {
  write: false;
  run(input: InferOutput<S>, ctx: CallContext): Promise<ToolOutput>;
}

/** The staged write an apply belongs to. */
export interface StagedRef {
  id: string;
  /** when the confirm recorded its intent (ms since the epoch, the service's clock): an apply of this id happens after it */
  since: number;
}

/** What a plugin can tell about a staged write that was being applied when the service stopped. */
export type AppliedState =
  { state: 'applied'; output: ToolOutput } | { state: 'not_applied' } | { state: 'unknown'; code?: 'outcome_unknown' };

export interface WriteTool<S extends ToolSchema = ToolSchema> extends ToolBase<S> {
  write: true;
  /** Build the preview; must not change anything. */
  preview(input: InferOutput<S>, ctx: CallContext): Promise<WritePlan>;
  /**
   * true when preview() depends on the payload alone (an upstream's
   * arguments): a confirm builds it again from the payload and refuses the
   * write as stale when it differs from the one the person saw.
   */
  repeatablePreview?: boolean;
  /** The target's current version, so a confirm can refuse a stale preview. */
  currentVersion?(target: string): Promise<number | null>;
  /**
   * Apply a confirmed plan: all of it and resolve, or nothing and throw.
   * Called at most once per staged write. `staged` names the write: a plugin
   * that records `staged.id` in the same atomic write as the change can
   * return the recorded result instead of applying twice, and answer
   * `applied` after a crash (docs/staging.md, "Crash safety").
   */
  apply(payload: Record<string, unknown>, ctx: CallContext, staged?: StagedRef): Promise<ToolOutput>;
  /**
   * Asked at start for a write whose confirm was in flight when the service
   * stopped: did its apply take effect? `applied` completes the confirm with
   * that output, `not_applied` puts it back to pending. Without this method,
   * or with `unknown`, the write is marked failed (`apply_interrupted`) for a
   * person to check: it is never applied again on its own.
   */
  applied?(staged: StagedRef): Promise<AppliedState>;
}

/** Any tool, its schema's types erased: the registry's and the pipeline's view. */
export type Tool = ReadTool<ToolSchema> | WriteTool<ToolSchema>;

/** A resource a plugin exposes (resources/list, resources/read). */
export interface ResourceDef {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
  capability: Capability;
  /**
   * The tool that reads the same data: the resource is visible exactly when
   * that tool is (token narrowing, `disabled_tools`), so a hidden tool's data
   * cannot be read around it.
   */
  tool?: string;
  /** Without a `tool`: true keeps it visible to a token narrowed to some tools or plugins (documentation, no data). */
  public?: boolean;
  /** the owning plugin; the registry sets it */
  plugin?: string;
  read(ctx: CallContext): Promise<string>;
}

/**
 * What a running plugin uses to change its tools. Every change is checked
 * like a registration (schemas compile, names are valid and not another
 * plugin's) and ends in one registry change event.
 */
export interface PluginHost {
  /** Adds the tool, or replaces this plugin's tool of the same name. */
  putTool(tool: Tool): void;
  /** false when the plugin had no tool of that name */
  removeTool(name: string): boolean;
  /** Replaces all of the plugin's tools at once. */
  setTools(tools: readonly Tool[]): void;
  setResources(resources: readonly ResourceDef[]): void;
  /** The plugin's surface (prompts, resources passed through) changed: channels re-check what their tokens see. */
  surfaceChanged?(): void;
}

/** A source of tools: the built-in site, an upstream MCP server, ... */
export interface Plugin {
  id: string;
  title: string;
  kind: 'builtin' | 'site' | 'upstream';
  /** The tools it has when registered; later changes go through the host handed to `start`. */
  tools?(): readonly Tool[];
  resources?(): readonly ResourceDef[];
  /** prompts and resources passed through from elsewhere (an upstream's), visible as the plugin's tools-free resources are */
  surface?: PluginSurface;
  status?(): { status: PluginInfo['status']; detail: string | null };
  /** definitions listed but offered to no client until a person reviews them (an upstream's new or changed tools and prompts) */
  awaitingReview?(): { tools: number; prompts: number; views?: number; instructions?: number };
  /** Called once by the service after registration; `signal` aborts when the service stops. */
  start?(host: PluginHost, signal: AbortSignal): Promise<void>;
  stop?(): Promise<void>;
}

/** Helper for plugin authors: keeps the input type tied to the schema. */
export const defineTool = <S extends ToolSchema>(tool: ReadTool<S> | WriteTool<S>): Tool => tool;

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
  /** what more it offers now (completions, subscriptions); absent: nothing more */
  offers?(): SurfaceOffers;
  /** the source's own instructions for clients (an upstream's, as a person approved them), or null */
  instructions?(): string | null;
  /** completion/complete for one of its prompts or resource templates (it offers completions) */
  complete?(request: CompletionRequest, ctx: CallContext): Promise<Record<string, unknown>>;
  /** resources/subscribe of one of its resources for `holder` (it offers subscriptions), and its end */
  subscribe?(uri: string, holder: string, ctx: CallContext): Promise<void>;
  unsubscribe?(uri: string, holder: string): Promise<void>;
  /** the log level `holder` (a client's token) asked for, sent on to the source (it offers logging) */
  setLogLevel?(holder: string, level: string): Promise<void>;
}
