import type { z } from 'zod';
import type { UpstreamAddInput } from '../../../contract/upstreams.ts';
import { CLIENT_METADATA_PATH } from '../../../contract/oauth.ts';
import { GatehouseError } from '../../../core/errors.ts';
import { upstreamOAuthSecretAccount } from '../../../store/vault-account.ts';
import type { StoredOAuth, UpstreamRecord } from '../upstream-data.ts';
import type { Binding } from './coordinator.ts';
import type { OAuthTarget } from './vault-provider.ts';

/** Glue between the upstream records and the sign-in coordinator, kept out of the manager. */

type HttpInput = Extract<z.output<typeof UpstreamAddInput>['transport'], { kind: 'http' }>;

/** The stored `oauth` of a new HTTP upstream `id`; refuses a second credential beside it. */
export function storedOAuth(id: string, t: HttpInput): StoredOAuth | undefined {
  if (!t.oauth) return undefined;
  if (t.token_keychain)
    throw new GatehouseError('invalid_value', '--oauth and --token-keychain are two ways to authenticate: pick one');
  if (t.headers.some((h) => h.name.toLowerCase() === 'authorization'))
    throw new GatehouseError(
      'invalid_value',
      'the Authorization header is set by the OAuth sign-in: drop --header Authorization',
    );
  return {
    client_id: t.oauth.client_id ?? null,
    client_secret_account: t.oauth.client_secret ? upstreamOAuthSecretAccount(id) : null,
    scopes: t.oauth.scopes ?? null,
    client_metadata_url: t.oauth.client_metadata_url ?? null,
    issuer: null,
    resource: null,
    resource_metadata_url: null,
    first_listing_pending: true,
  };
}

export function oauthOf(rec: UpstreamRecord): StoredOAuth | undefined {
  return rec.transport.kind === 'http' ? rec.transport.oauth : undefined;
}

export function targetOf(
  rec: UpstreamRecord,
  defaultMetadataUrl: string | null,
): { target: OAuthTarget; binding: Binding | null } | null {
  const o = oauthOf(rec);
  if (!o || rec.transport.kind !== 'http') return null;
  return {
    target: {
      id: rec.id,
      url: rec.transport.url,
      client_id: o.client_id,
      client_secret_account: o.client_secret_account,
      scopes: o.scopes,
      client_metadata_url: o.client_metadata_url ?? defaultMetadataUrl,
    },
    binding:
      o.issuer && o.resource
        ? { issuer: o.issuer, resource: o.resource, resource_metadata_url: o.resource_metadata_url }
        : null,
  };
}

/**
 * An OAuth upstream is added before its first sign-in, when its tools cannot
 * be listed yet: the first listing after the sign-in waits, each tool and
 * prompt quarantined as new (offered to no client), until the person consents
 * to it as at `add` (the CLI's `login` prints the set and pins it; the
 * console asks, as its Add flow does). `first_listing_pending` says that
 * consent is still to be given; any review of the upstream ends it.
 */
export const awaitingConsent = (rec: UpstreamRecord): boolean => oauthOf(rec)?.first_listing_pending === true;

/** The prompt pins to reconcile against: an OAuth upstream waiting for its first consent pins nothing approved by itself. */
export const promptPinsOf = (rec: UpstreamRecord): UpstreamRecord['prompts'] =>
  rec.prompts ?? (awaitingConsent(rec) ? [] : null);

/**
 * The Client ID Metadata Document the reference cloud gateway serves for
 * this installation, when the service is connected to one over https (an
 * authorization server fetches the URL, so plain http never qualifies).
 */
export function cloudMetadataUrl(gatewayUrl: string | null | undefined): string | null {
  if (!gatewayUrl) return null;
  try {
    const u = new URL(gatewayUrl);
    return u.protocol === 'https:' ? `${u.origin}${u.pathname.replace(/\/+$/, '')}${CLIENT_METADATA_PATH}` : null;
  } catch {
    return null;
  }
}
