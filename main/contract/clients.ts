import { z } from 'zod';
import { CLIENT_IDS } from './client-locations.ts';
import { SandboxGrant, SandboxGrantsInput, UpstreamProcessInput } from './upstreams.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * The console's side of `gatehouse clients` (docs/clients.md): what each MCP
 * client on the service's machine has, an import's plan (what would run,
 * names only), one server's import at a time (so the screen shows each
 * server's progress), connect and restore. People only.
 */

export const ClientIdInput = lazySchema(() => z.object({ client: z.enum(CLIENT_IDS) }).strict());

const How = lazySchema(() =>
  z.object({
    kind: z.enum(['stdio', 'http']),
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env_names: z.array(z.string()).optional(),
    url: z.string().optional(),
    header_names: z.array(z.string()).optional(),
    sse: z.boolean().optional(),
    oauth: z.boolean().optional(),
  }),
);

export const ClientServerView = lazySchema(() =>
  z.object({
    name: z.string(),
    /** what it runs, without a value of env or headers */
    how: How.nullable(),
    disabled: z.boolean(),
    gatehouse: z.boolean(),
    imported_as: z.string().nullable(),
    stays: z.string().nullable(),
    placeholders: z.array(z.string()),
  }),
);
export type ClientServerView = z.infer<typeof ClientServerView>;

export const ClientReportView = lazySchema(() =>
  z.object({
    client: z.enum(CLIENT_IDS),
    label: z.string(),
    locations: z.array(
      z.object({
        scope: z.enum(['user', 'local', 'project', 'managed']),
        file: z.string(),
        read_only: z.boolean(),
        error: z.string().nullable(),
        servers: z.array(ClientServerView),
      }),
    ),
  }),
);
export type ClientReportView = z.infer<typeof ClientReportView>;

/** `[SCOPE:]NAME` -> upstream id, as `--as` */
const AsMap = lazySchema(() => z.record(z.string().max(200), z.string().max(32)).default({}));

export const ClientPlanInput = lazySchema(() =>
  z
    .object({
      client: z.enum(CLIENT_IDS),
      /** `NAME` or `SCOPE:NAME`; none = all */
      servers: z.array(z.string().max(200)).max(200).default([]),
      as: AsMap,
    })
    .strict(),
);

export const ClientPlanItem = lazySchema(() =>
  z.object({
    scope: z.string(),
    file: z.string(),
    server: z.string(),
    upstream: z.string().nullable(),
    skip: z.string().nullable(),
    how: How.nullable(),
    placeholders: z.array(z.string()),
    /** a stdio server's sandbox as the service would store it now: the grants its command line suggests (docs/upstreams.md, "Confinement") */
    sandbox: z.object({ unconfined: z.boolean(), grants: z.array(SandboxGrant) }).nullable(),
    /** a stdio server known to hold state per client: why one process per client suits it (docs/upstreams.md, "One process per client"), else null */
    process_suggestion: z.string().nullable().optional(),
  }),
);
export type ClientPlanItem = z.infer<typeof ClientPlanItem>;

export const ClientImportInput = lazySchema(() =>
  z
    .object({
      client: z.enum(CLIENT_IDS),
      server: z.string().max(200),
      as: z.string().max(32).optional(),
      /** what the person grants this stdio server, beside what its command line suggests (as `upstreams add`) */
      sandbox: SandboxGrantsInput.omit({ suggest: true }).optional(),
      /** one process shared by every client (absent) or one per client token, as `upstreams add` takes it */
      process: UpstreamProcessInput.optional(),
    })
    .strict(),
);

export const ClientImportAnswer = lazySchema(() =>
  z.object({
    server: z.string(),
    scope: z.string(),
    id: z.string(),
    phase: z.enum(['pinned', 'failed']),
    tools: z.number().int().optional(),
    prompts: z.number().int().optional(),
    sign_in: z.boolean().optional(),
    tool_list: z.array(z.object({ name: z.string(), class: z.enum(['read', 'write']) })).optional(),
    error: z.string().optional(),
  }),
);
export type ClientImportAnswer = z.infer<typeof ClientImportAnswer>;

export const ClientConnectAnswer = lazySchema(() =>
  z.object({
    client: z.enum(CLIENT_IDS),
    files: z.array(
      z.object({
        file: z.string(),
        backup: z.string(),
        entry_name: z.string(),
        removed: z.array(z.string()),
        readable_by_others: z.boolean(),
      }),
    ),
    skipped: z.array(z.object({ file: z.string(), why: z.string() })),
    token_id: z.string().nullable(),
  }),
);
export type ClientConnectAnswer = z.infer<typeof ClientConnectAnswer>;

export const ClientRestoreAnswer = lazySchema(() =>
  z.array(
    z.object({
      file: z.string(),
      how: z.enum(['bytes', 'entries']),
      put_back: z.array(z.string()),
      kept: z.array(z.string()),
    }),
  ),
);
export type ClientRestoreAnswer = z.infer<typeof ClientRestoreAnswer>;
