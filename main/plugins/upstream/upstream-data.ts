import { z } from 'zod';
import {
  EnvName,
  HeaderName,
  QuarantineReason,
  SandboxGrant,
  ToolClass,
  UpstreamIdRef,
} from '../../contract/upstreams.ts';
import { PreviewRecipe } from '../../contract/preview-recipes.ts';
import { StoredProtocolEra } from '../../contract/protocol-era.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

/**
 * `upstreams.json` in the data dir: each upstream's configuration and the
 * tool definitions a person approved, pinned by hash. Secrets are not here:
 * env and header values and bearer tokens are in the vault, under the
 * accounts named by `secrets_account` / `token_keychain`.
 */

/** A tool definition as pinned: exactly what is hashed and shown to clients. */
export const ToolDefinition = lazySchema(() =>
  z.object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
    /** the upstream's own `_meta`, listed to clients with it; only its `ui` part (an MCP App's view and visibility) is hashed */
    _meta: z.record(z.string(), z.unknown()).optional(),
    /** how it may be run (`taskSupport`), listed to clients as sent; not hashed (how it is called, not what it does) */
    execution: z.record(z.string(), z.unknown()).optional(),
  }),
);
export type ToolDefinition = z.infer<typeof ToolDefinition>;

export const PinnedTool = lazySchema(() =>
  z.object({
    /** the upstream's own name */
    name: z.string(),
    /** the approved definition and its hash; null until a person first approves one */
    approved: z.object({ hash: z.string(), definition: ToolDefinition }).nullable(),
    /** a listed definition that differs from the approved one (or a new tool): hidden from clients until approved */
    pending: z
      .object({ hash: z.string(), definition: ToolDefinition, reason: QuarantineReason })
      .nullable()
      .default(null),
    /** a person hid it: never offered, whatever the upstream lists */
    hidden: z.boolean().default(false),
    /** a person's own mark; without it, a tool is a read only when its approved definition says readOnlyHint: true */
    marked: ToolClass.nullable().default(null),
    /** not in the upstream's last listing */
    removed: z.boolean().default(false),
  }),
);
export type PinnedTool = z.infer<typeof PinnedTool>;

/** A prompt definition as pinned, under the upstream's own name: exactly what is hashed and shown to clients (no `_meta`, no icons). */
export const PromptDefinition = lazySchema(() =>
  z.object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    arguments: z
      .array(z.object({ name: z.string(), description: z.string().optional(), required: z.boolean().optional() }))
      .optional(),
  }),
);
export type PromptDefinition = z.infer<typeof PromptDefinition>;

/** A prompt's pin: as a tool's, without a class (a prompt's messages come with each get, like a tool's result). */
export const PinnedPrompt = lazySchema(() =>
  PinnedTool.omit({ approved: true, pending: true, marked: true }).extend({
    approved: z.object({ hash: z.string(), definition: PromptDefinition }).nullable(),
    pending: z
      .object({ hash: z.string(), definition: PromptDefinition, reason: QuarantineReason })
      .nullable()
      .default(null),
  }),
);
export type PinnedPrompt = z.infer<typeof PinnedPrompt>;

/**
 * An MCP App view as pinned (views.ts): its own `ui://` URI, type, what it asks
 * for (`_meta.ui`: CSP domains, permissions) and its bytes' hash, which are
 * hashed; its bytes (`text` or `blob`, bounded) are kept to serve while a
 * changed one waits, and to show the diff.
 */
export const ViewDefinition = lazySchema(() =>
  z.object({
    name: z.string(),
    mimeType: z.string(),
    ui: z.record(z.string(), z.unknown()).optional(),
    content_hash: z.string(),
    size: z.number().int(),
    text: z.string().optional(),
    blob: z.string().optional(),
  }),
);
export type ViewDefinition = z.infer<typeof ViewDefinition>;

export const PinnedView = lazySchema(() =>
  PinnedPrompt.omit({ approved: true, pending: true }).extend({
    approved: z.object({ hash: z.string(), definition: ViewDefinition }).nullable(),
    pending: z
      .object({ hash: z.string(), definition: ViewDefinition, reason: QuarantineReason })
      .nullable()
      .default(null),
  }),
);
export type PinnedView = z.infer<typeof PinnedView>;

/**
 * An upstream's `instructions` (its initialize or server/discover answer) as pinned (instructions.ts): the
 * text clients are given, masked and bounded, which is hashed, and how long the upstream's own was. One
 * pin per upstream, named `instructions`.
 */
export const InstructionsDefinition = lazySchema(() =>
  z.object({
    name: z.literal('instructions'),
    text: z.string(),
    /** characters the upstream sent (more than `text` holds when it was cut at the bound) */
    length: z.number().int(),
  }),
);
export type InstructionsDefinition = z.infer<typeof InstructionsDefinition>;

export const PinnedInstructions = lazySchema(() =>
  PinnedPrompt.omit({ approved: true, pending: true }).extend({
    approved: z.object({ hash: z.string(), definition: InstructionsDefinition }).nullable(),
    pending: z
      .object({ hash: z.string(), definition: InstructionsDefinition, reason: QuarantineReason })
      .nullable()
      .default(null),
  }),
);
export type PinnedInstructions = z.infer<typeof PinnedInstructions>;

/** An OAuth upstream's configuration and the issuer/resource it signed in with: references only, the tokens are in the vault (oauth/oauth-vault.ts). */
export const StoredOAuth = lazySchema(() =>
  z.object({
    client_id: z.string().nullable(),
    /** the vault account holding that pre-registered client's secret (a confidential client); null: a public client */
    client_secret_account: z.string().nullable().default(null),
    scopes: z.string().nullable(),
    client_metadata_url: z.string().nullable(),
    issuer: z.string().nullable().default(null),
    resource: z.string().nullable().default(null),
    /** the protected resource metadata URL its 401 named when it signed in (RFC 9728 section 5.1); null: the well-known locations */
    resource_metadata_url: z.string().nullable().default(null),
    /** added before its first sign-in: the first listing after it is what the person consented to (pinned approved) */
    first_listing_pending: z.boolean().default(false),
  }),
);
export type StoredOAuth = z.infer<typeof StoredOAuth>;

/**
 * A stdio upstream's sandbox: run unconfined (a person's choice) or confined with these grants.
 * Absent on a record stored before confinement: confined with what its command line suggests
 * (sandbox/grants.ts), never more than the command a person consented to.
 */
export const StoredSandbox = lazySchema(() =>
  z.object({
    unconfined: z.boolean().default(false),
    grants: z.array(SandboxGrant).default([]),
  }),
);
export type StoredSandbox = z.infer<typeof StoredSandbox>;

export const StoredTransport = lazySchema(() =>
  z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('stdio'),
      command: z.string(),
      args: z.array(z.string()),
      env_names: z.array(EnvName),
      sandbox: StoredSandbox.optional(),
    }),
    z.object({
      kind: z.literal('http'),
      url: z.string(),
      header_names: z.array(HeaderName),
      token_keychain: z.string().nullable(),
      oauth: StoredOAuth.optional(),
      /** the old HTTP+SSE transport (2024-11-05), for servers that never moved to Streamable HTTP */
      sse: z.boolean().optional(),
    }),
  ]),
);
export type StoredTransport = z.infer<typeof StoredTransport>;

export const UpstreamRecord = lazySchema(() =>
  z.object({
    /** the id rule without the refusal of new `constructor` ids: a file written before it still loads */
    id: UpstreamIdRef,
    enabled: z.boolean(),
    created: z.string(),
    transport: StoredTransport,
    /** the vault account holding `{env, headers}` values; null when there are none */
    secrets_account: z.string().nullable(),
    timeout_ms: z.number().int(),
    /** a stdio upstream's processes (absent: one shared by every client) */
    process: z
      .object({ mode: z.enum(['shared', 'per-client']), max: z.number().int(), idle_ms: z.number().int() })
      .optional(),
    /**
     * Which tools it lists only to clients that can sample or elicit, learned for the listing named by `listing`
     * (a hash of its definitions): learned again only when the listing changes (docs/decisions.md, "Learn the sets by listing, not
     * by guessing from schemas"). `tools`: name -> the capability sets it was listed under.
     */
    client_needs: z
      .object({
        listing: z.string(),
        tools: z.array(z.object({ name: z.string(), sets: z.array(z.array(z.enum(['sampling', 'elicitation']))) })),
      })
      .optional(),
    /** what an HTTP upstream spoke last time (2026-07-28, or the 2025 handshake): the next connect starts with it */
    era: StoredProtocolEra.nullable().default(null),
    tools: z.array(PinnedTool),
    /**
     * Its prompts' pins. null: none yet (an upstream stored before prompts were
     * pinned, or an OAuth one before its first sign-in): the first listing is
     * pinned approved, once (docs/decisions.md, "Upstream prompts are pinned like tools").
     */
    prompts: z.array(PinnedPrompt).nullable().default(null),
    /** the person's own preview recipes, one per write tool, in place of a shipped one of that tool (docs/staging.md) */
    recipes: z.array(PreviewRecipe).default([]),
    /** its MCP App views' pins (views.ts); a record stored before views were pinned has none, and each view waits as new */
    views: z.array(PinnedView).default([]),
    /**
     * Its instructions' pin (none, or one named `instructions`): a record stored before instructions were
     * pinned has none, and the upstream's instructions wait as new, given to no client until a person approves them.
     */
    instructions: z.array(PinnedInstructions).default([]),
  }),
);
export type UpstreamRecord = z.infer<typeof UpstreamRecord>;

export const UpstreamsData = lazySchema(() => z.object({ version: z.literal(1), upstreams: z.array(UpstreamRecord) }));
export type UpstreamsData = z.infer<typeof UpstreamsData>;
export const emptyUpstreams = (): UpstreamsData => ({ version: 1, upstreams: [] });

/** The values behind `secrets_account`, as kept in the vault (JSON). */
export const UpstreamSecrets = lazySchema(() =>
  z.object({
    env: z.array(z.object({ name: EnvName, value: z.string() })).default([]),
    headers: z.array(z.object({ name: HeaderName, value: z.string() })).default([]),
  }),
);
export type UpstreamSecrets = z.infer<typeof UpstreamSecrets>;
