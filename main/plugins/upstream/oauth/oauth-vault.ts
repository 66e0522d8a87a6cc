import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { Vault } from '../../../core/ports/ports.ts';
import { lazySchema } from '../../../contract/lazy-schema.ts';

/**
 * What of a sign-in is kept in the vault, and under which account. Each kind
 * is ONE vault item written in one `set` (the file vault replaces its file
 * atomically; a keychain item is written whole), so a process killed at any
 * point leaves each item either as it was or complete, never half:
 *
 *  - `oauth-client/<issuer>`: the registration with that authorization server
 *    (client id, secret when it gave one). Keyed by issuer: an AS that changes
 *    finds no registration and Gatehouse registers again.
 *  - `oauth-tokens/<issuer resource>`: access token, refresh token (when
 *    given), expiry and scope, for one resource at one issuer.
 *  - `oauth-flow/<issuer resource>`: an unfinished sign-in: PKCE verifier,
 *    state, the discovery it was started with. Written before the browser
 *    opens, deleted after the tokens are saved; a leftover is overwritten by
 *    the next sign-in and never read without its state coming back.
 *
 * Account names carry a hash of the issuer (and resource), never the URL:
 * bounded in length, free of characters a keychain could mind.
 */

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 40);
export const clientAccount = (issuer: string) => `oauth-client/${digest(issuer)}`;
export const tokensAccount = (issuer: string, resource: string) => `oauth-tokens/${digest(issuer, resource)}`;
export const flowAccount = (issuer: string, resource: string) => `oauth-flow/${digest(issuer, resource)}`;

export const StoredClient = lazySchema(() =>
  z
    .object({
      issuer: z.string(),
      client_id: z.string(),
      client_secret: z.string().optional(),
      client_id_issued_at: z.number().optional(),
      client_secret_expires_at: z.number().optional(),
      registration: z.enum(['preregistered', 'metadata_document', 'dynamic']),
    })
    .passthrough(),
);
export type StoredClient = z.infer<typeof StoredClient>;

export const StoredTokens = lazySchema(() =>
  z.object({
    issuer: z.string(),
    resource: z.string(),
    access_token: z.string(),
    token_type: z.string(),
    refresh_token: z.string().optional(),
    scope: z.string().optional(),
    /** epoch ms; absent when the server gave no expires_in */
    expires_at: z.number().optional(),
  }),
);
export type StoredTokens = z.infer<typeof StoredTokens>;

export const StoredFlow = lazySchema(() =>
  z.object({
    state: z.string(),
    code_verifier: z.string(),
    redirect_uri: z.string(),
    /** as the SDK handed it over (the SDK reads it back and checks the issuer against it): any object */
    discovery: z.custom<OAuthDiscoveryState>((v) => typeof v === 'object' && v !== null && !Array.isArray(v)),
    started_at: z.number(),
  }),
);
export type StoredFlow = z.infer<typeof StoredFlow>;

/** Reads one item; a missing or unreadable one is absent (a corrupt item is never half-used). */
export async function readItem<T>(vault: Vault, account: string, schema: z.ZodType<T>): Promise<T | undefined> {
  const raw = await vault.get(account);
  if (raw === null) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export const writeItem = (vault: Vault, account: string, value: unknown) => vault.set(account, JSON.stringify(value));
