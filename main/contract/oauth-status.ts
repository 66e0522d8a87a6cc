import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/**
 * OAuth sign-in of remote MCP servers (docs/oauth.md): what a person
 * configures on an HTTP upstream and what the service shows of its sign-in.
 * Never a token, a client secret or a PKCE verifier: those are in the vault.
 */

/** An OAuth scope list as the CLI takes it: space-separated scope tokens (RFC 6749 section 3.3). */
export const ScopeList = lazySchema(() =>
  z
    .string()
    .max(1000)
    .regex(
      /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/,
      'scopes are space-separated tokens of printable characters (no quotes or backslashes)',
    ),
);

export const OAuthConfigInput = lazySchema(() =>
  z
    .object({
      /** a client id a person registered with the authorization server beforehand (used first) */
      client_id: z
        .string()
        .min(1)
        .max(500)
        .regex(/^[\x21-\x7e]+$/, 'a client id is printable characters without spaces')
        .optional(),
      /**
       * the secret of that pre-registered client (a confidential client): kept in the vault, never shown or logged; sent to
       * the token endpoint as the server's metadata allows (client_secret_basic, else client_secret_post)
       */
      client_secret: z.string().min(1).max(4096).optional(),
      scopes: ScopeList.optional(),
      /** where Gatehouse's Client ID Metadata Document is served (https, a path); the default is the cloud gateway's */
      client_metadata_url: z
        .string()
        .max(2048)
        .url()
        .refine((u) => /^https:\/\/[^/]+\/./i.test(u), 'the client metadata URL is https:// with a path')
        .optional(),
    })
    .strict()
    .refine((o) => !o.client_secret || o.client_id, {
      message: 'a client secret belongs to a pre-registered client: give its client id too',
      path: ['client_secret'],
    }),
);
export type OAuthConfigInput = z.input<typeof OAuthConfigInput>;

export const SignInState = lazySchema(() => z.enum(['signed_in', 'signed_out', 'sign_in_required', 'signing_in']));
export type SignInState = z.infer<typeof SignInState>;

/** What a sign-out told the authorization server (RFC 7009 revocation); the local copy is deleted whatever it says. */
export const OAuthRevocation = lazySchema(() =>
  z.object({
    /** revoked: the server took the revocation; not_offered: its metadata names no revocation_endpoint; failed: see warning; not_signed_in: no tokens were held */
    outcome: z.enum(['revoked', 'not_offered', 'failed', 'not_signed_in']),
    /** for people, when it failed (never a token) */
    warning: z.string().nullable(),
  }),
);
export type OAuthRevocation = z.infer<typeof OAuthRevocation>;

export const OAuthStatus = lazySchema(() =>
  z.object({
    id: z.string(),
    state: SignInState,
    /** why a sign-in is needed (expired refresh, more scopes asked for, signed out), for people */
    reason: z.string().nullable(),
    issuer: z.string().nullable(),
    resource: z.string().nullable(),
    /** the scopes granted (space-separated), or those a sign-in will ask for */
    scopes: z.string().nullable(),
    /** when the access token expires (ISO), when known */
    expires_at: z.string().nullable(),
    /** whether a refresh token is held (never the token itself) */
    refreshable: z.boolean(),
    /** how the client is registered with the authorization server */
    registration: z.enum(['preregistered', 'metadata_document', 'dynamic']).nullable(),
    /** while signing in: the authorization URL to open in a browser on this machine */
    authorization_url: z.string().nullable(),
    /** only in the answer to a sign-out */
    revocation: OAuthRevocation.optional(),
  }),
);
export type OAuthStatus = z.infer<typeof OAuthStatus>;
