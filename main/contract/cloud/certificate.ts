import { z } from 'zod';
import { ProductStates } from './catalog.ts';
import { Period, Metric, Scope } from './usage.ts';
import { lazySchema } from '../lazy-schema.ts';

/**
 * The signed grant (docs/cloud-gateway.md "Certificates and keys"): the gateway signs
 * the exact JSON bytes of the payload with its Ed25519 key; the client
 * verifies those bytes against the key it pinned, then parses them.
 */
export const LicenseStatus = lazySchema(() => z.enum(['active', 'expired', 'invalid']));
export type LicenseStatus = z.infer<typeof LicenseStatus>;

export const CloudEntitlement = lazySchema(() =>
  z.object({
    feature: z.string(),
    allowed: z.boolean(),
    plan: z.string(),
    expires_at: z.string().nullable(),
  }),
);
export type CloudEntitlement = z.infer<typeof CloudEntitlement>;

export const CertificateLimit = lazySchema(() =>
  z.object({ scope: Scope, metric: Metric, period: Period, limit: z.number().int() }),
);

export const CertificatePayload = lazySchema(() =>
  z.object({
    site_id: z.string(),
    license: z.object({
      status: LicenseStatus,
      /** null when no license is bound to the site */
      plan: z.string().nullable(),
      key_preview: z.string().nullable(),
      expires_at: z.string().nullable(),
    }),
    entitlements: z.array(CloudEntitlement),
    products: ProductStates,
    limits: z.array(CertificateLimit),
    update: z.object({ channel: z.string(), eligible: z.boolean() }),
    issued_at: z.string(),
    /** when the client stops trusting this certificate; separate from (and usually before) license.expires_at */
    cert_expires_at: z.string(),
  }),
);
export type CertificatePayload = z.infer<typeof CertificatePayload>;

export const Certificate = lazySchema(() =>
  z.object({
    /** base64url of the payload's JSON bytes */
    payload: z.string(),
    /** base64url Ed25519 signature over exactly those bytes */
    sig: z.string(),
    alg: z.literal('ed25519'),
    kid: z.string(),
  }),
);
export type Certificate = z.infer<typeof Certificate>;

/** Lifetime of a certificate; a rotated key stays published at least this long. */
export const CERTIFICATE_TTL_SECONDS = 7 * 24 * 3600;

export const Jwk = lazySchema(() =>
  z.object({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string(),
    kid: z.string(),
    use: z.literal('sig'),
  }),
);
export type Jwk = z.infer<typeof Jwk>;
export const Jwks = lazySchema(() => z.object({ keys: z.array(Jwk) }));
export type Jwks = z.infer<typeof Jwks>;
