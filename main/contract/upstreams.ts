import { z } from 'zod';
import { FieldChange } from './staged.ts';
import { ProtocolEra } from './protocol-era.ts';
import { OAuthConfigInput, OAuthStatus } from './oauth-status.ts';
import { PreviewRecipe, RecipeToolName, RecipeView } from './preview-recipes.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * Upstream MCP servers behind Gatehouse (docs/upstreams.md): what a person
 * configures, what the service shows of each upstream and of its tools. The
 * stored configuration is never sent as is: secrets (header values, env
 * values, bearer tokens) live in the vault and only their names appear here.
 */

/**
 * An upstream id: 1-32 of a-z 0-9 and inner hyphens. No underscore at all, so
 * `<id>__<tool>` splits at its first `__` into exactly one id: two upstreams
 * can never produce the same namespaced name.
 */
export const UPSTREAM_ID = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
/** An id naming an upstream that exists (show, remove, ...): the rule alone. */
export const UpstreamIdRef = lazySchema(() =>
  z
    .string()
    .regex(
      UPSTREAM_ID,
      'an upstream id is 1-32 of a-z 0-9 and inner hyphens (no underscores), e.g. "files" or "git-work"',
    ),
);
/** A new upstream's id. `constructor` fits the rule but is a member of every JavaScript object: refused, as it is for profile names. */
export const UpstreamId = lazySchema(() =>
  UpstreamIdRef.refine((id) => !(id in Object.prototype), {
    error: (issue) =>
      `'${String(issue.input)}' is a name every JavaScript object has and cannot be an upstream id: pick another`,
  }),
);
/** Between the upstream id and its tool's own name in the one namespace clients see. */
export const NAMESPACE_SEPARATOR = '__';
/** Plugin ids Gatehouse's own tools use: an upstream cannot take them. */
export const RESERVED_UPSTREAM_IDS: readonly string[] = ['gatehouse', 'site', 'builtin'];
/** The default time one upstream call may take without progress (progress extends it). */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;

export const EnvName = lazySchema(() =>
  z
    .string()
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]{0,127}$/,
      'an environment variable name is letters, digits and _ (not starting with a digit)',
    ),
);
/** An HTTP header name (RFC 9110 token). */
export const HeaderName = lazySchema(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'a header name is 1-100 token characters')
    // A valid token, but Node's fetch drops it without a word (its header list is a plain object): refused rather than lost.
    .refine((n) => n !== '__proto__', {
      error: "a header named '__proto__' cannot be sent (Node's fetch drops it): pick another name",
    }),
);
/** Headers Gatehouse sets itself and a person may not (the upstream's own protocol and the token Gatehouse sends). */
export const RESERVED_HEADERS: readonly string[] = [
  'host',
  'content-length',
  'content-type',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'connection',
  'transfer-encoding',
];
const secretValue = lazySchema(() =>
  z
    .string()
    .max(16 * 1024)
    .refine((v) => !/[\r\n\0]/.test(v), 'a value must not contain line breaks or NUL'),
);
const NamedValue = <N extends z.ZodType<string>>(name: N) => z.object({ name, value: secretValue }).strict();

/** A folder granted to a confined stdio upstream: an absolute path or one starting with `~/` (the person's HOME). */
export const SandboxPath = lazySchema(() =>
  z
    .string()
    .min(1)
    .max(1024)
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'a path must not contain control characters')
    .refine(
      (v) => v.startsWith('/') || v === '~' || v.startsWith('~/'),
      'a granted folder is an absolute path (or ~/...)',
    ),
);
/**
 * A host a confined upstream may reach through Gatehouse's filtering proxy: `api.github.com` (ports 80 and 443),
 * `api.github.com:8443`, `*.example.com`, `localhost:8080` (loopback and private addresses only when named so).
 */
export const SandboxHost = lazySchema(() =>
  z
    .string()
    .max(260)
    .regex(
      /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(:[0-9]{1,5})?$/,
      'a network grant is HOST or HOST:PORT (e.g. api.github.com, localhost:8080, *.example.com)',
    )
    .refine(
      (v) => !v.includes(':') || (Number(v.split(':')[1]) >= 1 && Number(v.split(':')[1]) <= 65535),
      'a port is 1-65535',
    ),
);
/** What a person grants a stdio upstream beyond its runtime and package (docs/upstreams.md, "Confinement"). */
export const SandboxGrantsInput = lazySchema(() =>
  z
    .object({
      /** run it without the OS sandbox: a person's explicit choice, shown as a warning everywhere */
      unconfined: z.boolean().default(false),
      read: z.array(SandboxPath).max(50).default([]),
      write: z.array(SandboxPath).max(50).default([]),
      net: z.array(SandboxHost).max(50).default([]),
      /** add the grants the command line suggests (server-filesystem's folders, a runner's registry); default true */
      suggest: z.boolean().default(true),
    })
    .strict(),
);
export type SandboxGrantsInput = z.input<typeof SandboxGrantsInput>;

/** One grant as stored and shown: what, and where it came from (typed by the person, or suggested from the command line). */
export const SandboxGrant = lazySchema(() =>
  z.object({
    kind: z.enum(['read', 'write', 'net']),
    value: z.string(),
    from: z.enum(['person', 'command_line', 'runner']),
  }),
);
export type SandboxGrant = z.infer<typeof SandboxGrant>;

/** How a stdio upstream runs, for people: confined (and by what, with which grants), or unconfined and why. */
export const UpstreamConfinement = lazySchema(() =>
  z.object({
    /** confined: inside the OS sandbox; unconfined: without it (a person chose so, or the platform has none); unavailable: the sandbox cannot start here, so the upstream is down */
    state: z.enum(['confined', 'unconfined', 'unavailable']),
    backend: z.enum(['bubblewrap', 'seatbelt']).nullable(),
    /** in words: why it runs as it does */
    why: z.string(),
    /** what to do about an unconfined or unavailable one */
    fix: z.string().nullable(),
    grants: z.array(SandboxGrant),
    /** a package runner (npx, uvx) the command starts through, and the registry it fetches from */
    runner: z.object({ name: z.string(), registry: z.string() }).nullable(),
    /** the upstream's own persistent HOME (its state, a runner's cache), under the data dir */
    private_home: z.string().nullable(),
    /** a person chose `--unconfined` (not the platform): what `upstreams.grant` keeps unless told otherwise */
    person_unconfined: z.boolean(),
  }),
);
export type UpstreamConfinement = z.infer<typeof UpstreamConfinement>;

/** `upstreams.grant`: replaces a stdio upstream's grants (a person's action, audited); it restarts with them. */
export const UpstreamGrantInput = lazySchema(() =>
  z
    .object({
      id: UpstreamIdRef,
      unconfined: z.boolean().default(false),
      read: z.array(SandboxPath).max(50).default([]),
      write: z.array(SandboxPath).max(50).default([]),
      net: z.array(SandboxHost).max(50).default([]),
      /** keep the grants the command line suggests (as at add); default true */
      suggest: z.boolean().default(true),
    })
    .strict(),
);
export type UpstreamGrantInput = z.input<typeof UpstreamGrantInput>;

/** One process shared by every client (the default), or one per client token (docs/upstreams.md, "One process per client"). */
export const ProcessMode = lazySchema(() => z.enum(['shared', 'per-client']));
export type ProcessMode = z.infer<typeof ProcessMode>;
/** how many per-client processes of one upstream run at once, unless a person sets another bound */
export const DEFAULT_MAX_PROCESSES = 8;
/** how long a per-client process may go without a call before it is stopped, unless a person sets another time */
export const DEFAULT_PROCESS_IDLE_MS = 15 * 60_000;
export const UpstreamProcessInput = lazySchema(() =>
  z
    .object({
      mode: ProcessMode,
      /** per-client: at most this many run at once; the next client is refused (retryable) until one stops */
      max: z.number().int().min(1).max(64).default(DEFAULT_MAX_PROCESSES),
      /** per-client: a process without a call for this long is stopped (its client's next call starts a fresh one) */
      idle_ms: z
        .number()
        .int()
        .min(1000)
        .max(7 * 24 * 3_600_000)
        .default(DEFAULT_PROCESS_IDLE_MS),
    })
    .strict(),
);
export type UpstreamProcessInput = z.input<typeof UpstreamProcessInput>;
/** `upstreams.process`: sets how many processes a stdio upstream runs (a person's action, audited); it restarts with it. */
export const UpstreamProcessSetInput = lazySchema(() => UpstreamProcessInput.extend({ id: UpstreamIdRef }).strict());
export type UpstreamProcessSetInput = z.input<typeof UpstreamProcessSetInput>;
/** How an upstream's processes run, as people see it. */
export const UpstreamProcessView = lazySchema(() =>
  z.object({
    mode: ProcessMode,
    max: z.number().int(),
    idle_ms: z.number().int(),
    /** per-client processes running now */
    running: z.number().int(),
    /** a server known to hold state per client that shares one process: why one per client would suit it, else null */
    suggestion: z.string().nullable(),
  }),
);
export type UpstreamProcessView = z.infer<typeof UpstreamProcessView>;

export const UpstreamAddInput = lazySchema(() =>
  z
    .object({
      id: UpstreamId,
      transport: z.discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('stdio'),
            command: z
              .string()
              .min(1)
              .max(4096)
              // eslint-disable-next-line no-control-regex -- finding control characters is the point
              .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'the command must not contain control characters'),
            /** passed to the process as they are (no shell); NUL cannot be passed to a process at all */
            args: z
              .array(
                z
                  .string()
                  .max(4096)
                  .refine((v) => !v.includes('\0'), 'an argument must not contain NUL'),
              )
              .max(200)
              .default([]),
            /** the process's whole environment besides the minimal one (PATH, HOME, ...): nothing of Gatehouse's own */
            env: z.array(NamedValue(EnvName)).max(100).default([]),
            /** what the OS sandbox lets it reach (absent: confined with the suggested grants only) */
            sandbox: SandboxGrantsInput.optional(),
          })
          .strict(),
        z
          .object({
            kind: z.literal('http'),
            url: z
              .string()
              .max(2048)
              .url()
              .refine((u) => /^https?:\/\//i.test(u), 'the URL is http:// or https://')
              .refine(
                (u) => !/^https?:\/\/[^/?#]*@/i.test(u),
                'put credentials in --header or --token-keychain, not in the URL',
              ),
            headers: z.array(NamedValue(HeaderName)).max(50).default([]),
            /** a vault account holding a bearer token (`tokens create --keychain NAME` on the other side, or the bridge's) */
            token_keychain: z
              .string()
              .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/)
              .optional(),
            /** sign in with OAuth (docs/oauth.md): tokens in the vault, never here */
            oauth: OAuthConfigInput.optional(),
            /** the server speaks the old HTTP+SSE transport (a GET event stream, POSTs to the endpoint it names), not Streamable HTTP */
            sse: z.boolean().optional(),
          })
          .strict(),
      ]),
      /** the upstream's own tool names a person marks as reads (everything else is a write unless its readOnlyHint is accepted) */
      read: z.array(z.string().min(1).max(128)).max(1000).default([]),
      timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
      /** stdio only: one process shared by every client (absent) or one per client token */
      process: UpstreamProcessInput.optional(),
      /**
       * true or absent (the CLI): adding is consenting to the tools listed now, each pinned approved.
       * false (the console's two steps): the listed tools wait in quarantine, offered to
       * no client, until the person consents to that set (`consent` in upstreams.review).
       */
      approve_listed: z.boolean().optional(),
    })
    .strict(),
);
export type UpstreamAddInput = z.input<typeof UpstreamAddInput>;

/** `signed_out`: an OAuth upstream a person signed out of; `sign_in_required`: one whose sign-in ended otherwise (docs/oauth.md) */
export const UpstreamStatus = lazySchema(() =>
  z.enum(['connected', 'degraded', 'down', 'disabled', 'signed_out', 'sign_in_required']),
);
export type UpstreamStatus = z.infer<typeof UpstreamStatus>;
export const ToolClass = lazySchema(() => z.enum(['read', 'write']));
export type ToolClass = z.infer<typeof ToolClass>;
export const ToolState = lazySchema(() => z.enum(['approved', 'quarantined', 'hidden']));
export type ToolState = z.infer<typeof ToolState>;
/** Why a tool waits in quarantine: first seen after `add`, its definition changed, or only its readOnlyHint flipped. */
export const QuarantineReason = lazySchema(() => z.enum(['new', 'changed', 'hint_flipped']));
export type QuarantineReason = z.infer<typeof QuarantineReason>;

export const UpstreamHealth = lazySchema(() =>
  z.object({
    status: UpstreamStatus,
    last_error: z.string().nullable(),
    /** the last successful round trip (connect, list or call) */
    latency_ms: z.number().nullable(),
    restarts: z.number().int(),
    /** the protocol revision it speaks (`2026-07-28`, `2025-11-25`, ...), once known */
    protocol: z.string().nullable(),
    era: ProtocolEra.nullable(),
    connected_at: z.string().nullable(),
  }),
);
export type UpstreamHealth = z.infer<typeof UpstreamHealth>;

/** An upstream as shown to people: no secret, only names of headers and env variables. */
export const UpstreamView = lazySchema(() =>
  z.object({
    id: z.string(),
    kind: z.enum(['stdio', 'http']),
    enabled: z.boolean(),
    created: z.string(),
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env_names: z.array(z.string()).optional(),
    url: z.string().optional(),
    header_names: z.array(z.string()).optional(),
    token_keychain: z.string().nullable().optional(),
    /** an HTTP upstream that speaks the old HTTP+SSE transport */
    sse: z.boolean().optional(),
    /** an OAuth upstream's sign-in (docs/oauth.md); absent for the others */
    oauth: OAuthStatus.optional(),
    /** a stdio upstream's confinement (docs/upstreams.md, "Confinement"); absent for HTTP upstreams */
    confinement: UpstreamConfinement.optional(),
    /** a stdio upstream's processes: shared or one per client (docs/upstreams.md, "One process per client"); absent for HTTP upstreams */
    process: UpstreamProcessView.optional(),
    /**
     * an OAuth upstream whose first listing after its sign-in waits for the
     * person's consent (each tool and prompt quarantined as new, as after the
     * console's add): `upstreams login` gives it, the console asks for it
     */
    awaiting_consent: z.boolean().optional(),
    timeout_ms: z.number().int(),
    health: UpstreamHealth,
    tools: z.object({
      approved: z.number().int(),
      quarantined: z.number().int(),
      hidden: z.number().int(),
      removed: z.number().int(),
    }),
    /** its prompts, pinned like its tools (docs/upstreams.md, "Prompts and resources") */
    prompts: z.object({
      approved: z.number().int(),
      quarantined: z.number().int(),
      hidden: z.number().int(),
      removed: z.number().int(),
    }),
    /** its MCP App views, pinned like its tools (docs/upstreams.md, "MCP Apps"); absent from a service before views were pinned */
    views: z
      .object({
        approved: z.number().int(),
        quarantined: z.number().int(),
        hidden: z.number().int(),
        removed: z.number().int(),
      })
      .optional(),
    /** its log messages since the service started: passed on to its clients, and dropped past the rate bound (docs/upstreams.md, "Logs") */
    logs: z.object({ forwarded: z.number().int(), dropped: z.number().int() }).optional(),
    /** its instructions' pin state; absent: it sends none */
    instructions_state: ToolState.optional(),
    /** names that could not be offered (collision with a built-in tool, too long, invalid): reported at every (re)load */
    problems: z.array(z.string()),
  }),
);
export type UpstreamView = z.infer<typeof UpstreamView>;

/** What a person sees of any pinned definition, a tool's or a prompt's. */
const PinView = lazySchema(() =>
  z.object({
    /** the name clients see: `<id>__<name>` */
    name: z.string(),
    state: ToolState,
    /** sha256 of the approved definition; null before any approval */
    hash: z.string().nullable(),
    /** set while quarantined: why, the listed definition's hash and what changed (old -> new) */
    pending: z.object({ reason: QuarantineReason, hash: z.string(), changes: z.array(FieldChange) }).nullable(),
    /** no longer listed by the upstream (kept so a re-listing is recognised, and reported) */
    removed: z.boolean(),
    title: z.string().nullable(),
    description: z.string().nullable(),
  }),
);

/** A tool: its definition is name, title, description, schemas and annotations. */
export const UpstreamToolView = lazySchema(() =>
  PinView.extend({
    /** the upstream's own name */
    tool: z.string(),
    class: ToolClass,
  }),
);
export type UpstreamToolView = z.infer<typeof UpstreamToolView>;

/** A prompt: its definition is name, title, description and arguments; no class, and never `hint_flipped`. */
export const UpstreamPromptView = lazySchema(() =>
  PinView.extend({
    /** the upstream's own name */
    prompt: z.string(),
  }),
);
export type UpstreamPromptView = z.infer<typeof UpstreamPromptView>;

/** An MCP App view: its definition is its URI, type, `_meta.ui` (what it asks for) and its bytes' hash. `name` is the `ui://<id>/...` URI clients read. */
export const UpstreamViewView = lazySchema(() =>
  PinView.extend({
    /** the upstream's own ui:// URI */
    view: z.string(),
    /** bytes of the definition shown (what waits, else the approved one) */
    size: z.number().int(),
    /** what it asks the host for, in words: each CSP domain list, its permissions, its domain */
    asks: z.array(z.string()),
    /** while a changed view waits: its HTML against the approved one, the changed hunks (lib/line-diff.ts) */
    html_diff: z.object({ before: z.string(), after: z.string(), changed_lines: z.number().int() }).nullable(),
  }),
);
export type UpstreamViewView = z.infer<typeof UpstreamViewView>;

/** An upstream's instructions: its definition is their text (masked, bounded). `name` is `instructions`. */
export const UpstreamInstructionsView = lazySchema(() =>
  PinView.extend({
    /** the text shown (what waits, else the approved one) */
    text: z.string(),
    /** characters the upstream sent (more than `text` when cut at the bound) */
    length: z.number().int(),
    /** while changed instructions wait: their text against the approved one, the changed hunks (lib/line-diff.ts) */
    text_diff: z.object({ before: z.string(), after: z.string(), changed_lines: z.number().int() }).nullable(),
  }),
);
export type UpstreamInstructionsView = z.infer<typeof UpstreamInstructionsView>;

export const UpstreamDetail = lazySchema(() =>
  UpstreamView.extend({
    tool_list: z.array(UpstreamToolView),
    prompt_list: z.array(UpstreamPromptView),
    view_list: z.array(UpstreamViewView).optional(),
    /** its instructions' pin; null: it sends none */
    instructions: UpstreamInstructionsView.nullable().optional(),
    /** the last lines the stdio process wrote to stderr (bounded) */
    stderr: z.array(z.string()),
    /** the preview recipes of its write tools: the person's and the shipped ones (docs/staging.md) */
    recipes: z.array(RecipeView),
  }),
);
export type UpstreamDetail = z.infer<typeof UpstreamDetail>;

const DefinitionHash = lazySchema(() =>
  z.string().regex(/^sha256:[0-9a-f]{64}$/, 'a definition hash is sha256:<64 hex>'),
);

export const UpstreamReviewInput = lazySchema(() =>
  z
    .object({
      id: UpstreamIdRef,
      /** refused when given (as `approve_all`, `approve_prompts`): an approval is bound to a hash, `consent` */
      approve: z.array(z.string().min(1).max(200)).max(1000).default([]),
      approve_all: z.boolean().default(false),
      hide: z.array(z.string().min(1).max(200)).max(1000).default([]),
      read: z.array(z.string().min(1).max(200)).max(1000).default([]),
      write: z.array(z.string().min(1).max(200)).max(1000).default([]),
      /**
       * Approves each named tool only if its listed definition still has the hash the
       * person was shown; one that changed since refuses the whole review (`conflict`).
       */
      consent: z
        .array(z.object({ tool: z.string().min(1).max(200), hash: DefinitionHash }).strict())
        .max(1000)
        .optional(),
      /** prompts (their own or namespaced names), kept apart from tools so a prompt and a tool of one name are never confused; `approve_all` covers both */
      approve_prompts: z.array(z.string().min(1).max(200)).max(1000).default([]),
      hide_prompts: z.array(z.string().min(1).max(200)).max(1000).default([]),
      /** as `consent`, for prompts: approved only while the listed definition still has that hash */
      prompt_consent: z
        .array(z.object({ prompt: z.string().min(1).max(200), hash: DefinitionHash }).strict())
        .max(1000)
        .optional(),
      /** MCP App views (their own ui:// URI, or the ui://<id>/ one clients see), approved only while what waits has that hash */
      view_consent: z
        .array(z.object({ view: z.string().min(1).max(2100), hash: DefinitionHash }).strict())
        .max(1000)
        .optional(),
      hide_views: z.array(z.string().min(1).max(2100)).max(1000).optional(),
      /** its instructions, approved only while what waits (or, hidden, what was approved) has that hash */
      instructions_consent: z.object({ hash: DefinitionHash }).strict().optional(),
      /** its instructions given to no client, whatever it sends */
      hide_instructions: z.boolean().optional(),
    })
    .strict(),
);
export type UpstreamReviewInput = z.input<typeof UpstreamReviewInput>;

export const UpstreamTestAnswer = lazySchema(() =>
  z.object({
    id: z.string(),
    ok: z.boolean(),
    latency_ms: z.number().nullable(),
    protocol: z.string().nullable(),
    tools: z.number().int(),
    error: z.string().nullable(),
  }),
);
export type UpstreamTestAnswer = z.infer<typeof UpstreamTestAnswer>;

/** `upstreams.recipe_set`: adds or replaces the person's preview recipe for one of the upstream's write tools (audited). */
export const UpstreamRecipeInput = lazySchema(() => z.object({ id: UpstreamIdRef, recipe: PreviewRecipe }).strict());
export type UpstreamRecipeInput = z.input<typeof UpstreamRecipeInput>;

/** `upstreams.recipe_remove`: removes the person's recipe for a tool (a shipped one of that name applies again). */
export const UpstreamRecipeRemoveInput = lazySchema(() =>
  z.object({ id: UpstreamIdRef, tool: RecipeToolName }).strict(),
);
export type UpstreamRecipeRemoveInput = z.input<typeof UpstreamRecipeRemoveInput>;
