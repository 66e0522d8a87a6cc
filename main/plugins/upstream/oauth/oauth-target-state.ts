import type { Challenge } from './challenge.ts';
import type { OAuthTarget } from './vault-provider.ts';

/** What an upstream last signed in with: the key its tokens, refresh and sign-in are shared under. */
export interface Binding {
  issuer: string;
  resource: string;
  /** where the server's 401 said its protected resource metadata is (RFC 9728 section 5.1), when it said so: a refresh discovers there */
  resource_metadata_url?: string | null;
}

export interface Need {
  reason: string;
  scopes?: string;
  /** a person signed out (not a refused refresh or an expiry): shown as `signed_out`, never a "sign in again" item */
  signedOut?: boolean;
}

/** One OAuth upstream as the coordinator keeps it. */
export interface Target {
  target: OAuthTarget;
  binding: Binding | null;
  need: Need | null;
  /** what the server's last 401 said (a sign-in's probe, or a connection's request) */
  challenge: Challenge | null;
}

export const SIGNED_OUT: Need = { reason: 'signed out', signedOut: true };

/** Upstreams of one issuer and resource share one sign-in, one token set and one refresh. */
export const keyOf = (b: Binding): string => `${b.issuer}\n${b.resource}`;

/**
 * The SDK's `computeScopeUnion` (space-separated scope tokens, each once, in order), here so that a status,
 * asked before any upstream connected, never loads the SDK (client-sdk.ts).
 */
export function computeScopeUnion(...scopes: Array<string | undefined>): string | undefined {
  const seen = new Set<string>();
  for (const scope of scopes) for (const token of scope?.split(/\s+/) ?? []) if (token) seen.add(token);
  return seen.size > 0 ? [...seen].join(' ') : undefined;
}

/** The protected resource metadata URL a 401 of this server named (now, or when it signed in), else null: the well-known ones. */
export function metadataUrlOf(t: Target): string | null {
  return t.challenge?.resourceMetadataUrl ?? t.binding?.resource_metadata_url ?? null;
}

export function metadataUrlOpt(t: Target): { resourceMetadataUrl?: URL } {
  const named = metadataUrlOf(t);
  return named ? { resourceMetadataUrl: new URL(named) } : {};
}
