import { z } from 'zod';
import { nameText } from './cloud/names.ts';
import { ProfileName } from './profiles.ts';
import { KEYCHAIN_NAME } from './paths.ts';
import { lazySchema } from './lazy-schema.ts';

/** `gth_` + 43 base64url characters (32 random bytes). */
export const TOKEN_PATTERN = /^gth_[A-Za-z0-9_-]{43}$/;
export const TOKEN_PREFIX = 'gth_';

/** Least-privilege narrowing chosen at creation; never wider than the user's capabilities. */
export const TokenScope = lazySchema(() =>
  z.object({
    read_only: z.boolean().default(false),
    /** When set, only these tools (still subject to the user's capabilities). */
    tools: z.array(z.string()).optional(),
    /** When set, only tools owned by these plugins. */
    plugins: z.array(z.string()).optional(),
    /** When set, only tools of this profile (main/contract/profiles.ts); a profile that no longer exists leaves nothing. */
    profile: z.string().optional(),
  }),
);
export type TokenScope = z.infer<typeof TokenScope>;

/** What the options store keeps. The clear token is never stored. */
export const TokenRecord = lazySchema(() =>
  z.object({
    id: z.string(),
    label: z.string().min(1).max(100),
    /** sha256 hex of the clear token */
    hash: z.string().regex(/^[0-9a-f]{64}$/),
    user_id: z.string(),
    /** "gth_…" + last 4 */
    preview: z.string(),
    created: z.string(),
    last_used: z.string().nullable().default(null),
    scope: TokenScope.default({ read_only: false }),
  }),
);
export type TokenRecord = z.infer<typeof TokenRecord>;

/** A token as shown to people: no hash. */
export const TokenView = lazySchema(() =>
  TokenRecord.omit({ hash: true }).extend({
    user_login: z.string().optional(),
    /** how many tools the token may see now (user's role, scope, profile, disabled tools); set by tokens.list */
    tool_count: z.number().int().optional(),
  }),
);
export type TokenView = z.infer<typeof TokenView>;

const scopeNames = lazySchema(() => z.array(z.string().min(1).max(128)).max(500));
export { KEYCHAIN_NAME };

export const TokenCreateInput = lazySchema(() =>
  z
    .object({
      label: z.string().trim().min(1, 'a label is required').pipe(nameText(100)),
      user: z.string().max(60).optional(),
      scope: z
        .object({
          read_only: z.boolean().optional(),
          tools: scopeNames.optional(),
          plugins: scopeNames.optional(),
          profile: ProfileName.optional(),
        })
        .strict()
        .optional(),
      /**
       * Save the clear token in the vault for gatehouse-bridge under this name
       * (`--token-keychain NAME`); the service keeps it in the clients' own
       * namespace of the vault, apart from its own secrets.
       */
      keychain_account: z
        .string()
        .regex(KEYCHAIN_NAME, 'a keychain name is 1-100 letters, digits, . _ - starting with a letter or digit')
        .optional(),
    })
    // a misplaced narrowing (`{"read_only": true}` beside `scope`) must not make a full token
    .strict(),
);
export type TokenCreateInput = z.infer<typeof TokenCreateInput>;

/** The only time the clear token leaves the service. */
export const TokenCreated = lazySchema(() =>
  z.object({
    token: z.string().regex(TOKEN_PATTERN),
    record: TokenView,
    keychain_account: z.string().optional(),
  }),
);
export type TokenCreated = z.infer<typeof TokenCreated>;
