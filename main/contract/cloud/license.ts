import { z } from 'zod';
import { Certificate, LicenseStatus } from './certificate.ts';
import { lazySchema } from '../lazy-schema.ts';

/** `ghl_` + 32 base64url characters (24 random bytes); stored hashed, shown once. */
export const LICENSE_KEY_PATTERN = /^ghl_[A-Za-z0-9_-]{32}$/;
export const LicenseKey = lazySchema(() =>
  z.string().max(100).regex(LICENSE_KEY_PATTERN, 'a license key: ghl_ followed by 32 characters'),
);

/** POST license/activate */
export const ActivateBody = lazySchema(() => z.strictObject({ license_key: LicenseKey }));

export const LicenseView = lazySchema(() =>
  z.object({
    status: LicenseStatus,
    plan: z.string().nullable(),
    key_preview: z.string().nullable(),
    /** the license's own expiry (null: does not expire) */
    license_expires_at: z.string().nullable(),
    sites_used: z.number().int().nullable(),
    site_limit: z.number().int().nullable(),
  }),
);
export type LicenseView = z.infer<typeof LicenseView>;

/** Answer of license/activate, license/status and license/refresh. */
export const LicenseAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    license: LicenseView,
    certificate: Certificate,
    cert_expires_at: z.string(),
  }),
);
export type LicenseAnswer = z.infer<typeof LicenseAnswer>;

/** POST license/deactivate: the seat is free again. */
export const DeactivateAnswer = lazySchema(() =>
  z.object({ success: z.literal(true), site_id: z.string(), license: LicenseView }),
);
