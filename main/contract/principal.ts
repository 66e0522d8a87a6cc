import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/**
 * Who acted, and through which surface. Recorded on every staged decision
 * (`decided_by`) and every audit entry (`principal`), and the input of every
 * permission check (`invoke` in main/core).
 *
 * - person: the owner of this Gatehouse, through the console (browser session
 *   or the app window), the tray, or the CLI (admin key from the vault, or
 *   directly on the data dir when no service runs). A person is not one of
 *   the site's users: it is whoever holds the machine's admin credential.
 * - token: an MCP client token's user, through the MCP endpoint (tools) or the
 *   local REST (read-only `GET pro/*` only).
 * - service: a background job of the service itself (expiry sweep, recovery).
 */
export const PersonSurface = lazySchema(() => z.enum(['console', 'tray', 'cli']));
export type PersonSurface = z.infer<typeof PersonSurface>;

/** The credential a person used: the console's session cookie, the desktop app itself, the admin key, or the data dir's files. */
export const PersonVia = lazySchema(() => z.enum(['session', 'app', 'admin_key', 'data_dir']));
export type PersonVia = z.infer<typeof PersonVia>;

export const TokenSurface = lazySchema(() => z.enum(['mcp', 'rest']));
export type TokenSurface = z.infer<typeof TokenSurface>;

export const PersonPrincipal = lazySchema(() =>
  z.object({
    kind: z.literal('person'),
    surface: PersonSurface,
    via: PersonVia,
    /** a console session's public id (`ses_` + 12 hex of the session id's sha256), never the session id itself */
    session: z.string().max(40).nullable().default(null),
  }),
);
export type PersonPrincipal = z.infer<typeof PersonPrincipal>;

export const TokenPrincipal = lazySchema(() =>
  z.object({
    kind: z.literal('token'),
    surface: TokenSurface,
    token_id: z.string().max(64),
    token_preview: z.string().max(64).nullable().default(null),
    user_id: z.string().max(64),
    login: z.string().max(60).nullable().default(null),
  }),
);
export type TokenPrincipal = z.infer<typeof TokenPrincipal>;

export const ServicePrincipal = lazySchema(() =>
  z.object({
    kind: z.literal('service'),
    /** e.g. `staged_expiry`, `recovery` */
    job: z.string().max(60),
  }),
);
export type ServicePrincipal = z.infer<typeof ServicePrincipal>;

/** A decision recorded before principals existed: its old free-text label ("admin", "console", "agent:bob"). */
export const LegacyPrincipal = lazySchema(() => z.object({ kind: z.literal('legacy'), label: z.string().max(200) }));
export type LegacyPrincipal = z.infer<typeof LegacyPrincipal>;

export const Principal = lazySchema(() =>
  z.discriminatedUnion('kind', [PersonPrincipal, TokenPrincipal, ServicePrincipal, LegacyPrincipal]),
);
export type Principal = z.infer<typeof Principal>;

/** `decided_by` as stored: a Principal; a string from an older record reads as a legacy principal. */
export const DecidedBy = lazySchema(() =>
  z.preprocess((v) => (typeof v === 'string' ? { kind: 'legacy', label: v.slice(0, 200) } : v), Principal.nullable()),
);

/** The principals of the surfaces that have no per-call detail. */
export const PRINCIPALS = {
  /** the console in the desktop app's window (IPC) */
  appConsole: { kind: 'person', surface: 'console', via: 'app', session: null },
  tray: { kind: 'person', surface: 'tray', via: 'app', session: null },
  /** the CLI through a running service, authenticated with the admin key */
  cliViaService: { kind: 'person', surface: 'cli', via: 'admin_key', session: null },
  /** the CLI working on the data dir itself (no service running) */
  cliDirect: { kind: 'person', surface: 'cli', via: 'data_dir', session: null },
  stagedExpiry: { kind: 'service', job: 'staged_expiry' },
} as const satisfies Record<string, Principal>;

/** A client token's principal, from its record and user. */
export const tokenPrincipal = (
  token: { id: string; preview: string },
  user: { id: string; login: string },
  surface: TokenSurface,
): TokenPrincipal => ({
  kind: 'token',
  surface,
  token_id: token.id,
  token_preview: token.preview,
  user_id: user.id,
  login: user.login,
});

export const consoleSession = (session: string): PersonPrincipal => ({
  kind: 'person',
  surface: 'console',
  via: 'session',
  session,
});
