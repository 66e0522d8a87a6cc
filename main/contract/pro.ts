import { z } from 'zod';
import { Entitlement } from './entitlements.ts';
import { LicenseKey } from './cloud/license.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * The local REST (`{REST_PREFIX}/pro/...`): answers in the
 * its own shape (`{success: true, ...}`), which the cloud client will fill
 * with real state. Loose objects: the cloud client adds fields.
 */
export const ProLicense = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    license: z.looseObject({
      status: z.string(),
      plan: z.string(),
      site_bound: z.boolean(),
      expires_at: z.string().nullable(),
    }),
    message: z.string().optional(),
  }),
);
export type ProLicense = z.infer<typeof ProLicense>;

export const ProEntitlements = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    source: z.string(),
    entitlements: z.array(Entitlement),
  }),
);
export type ProEntitlements = z.infer<typeof ProEntitlements>;

export const ProUsage = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    source: z.string(),
    since: z.string().nullable(),
    mcp_calls: z.number().int(),
    by_tool: z.record(z.string(), z.record(z.string(), z.number().int())),
    limits: z.array(z.unknown()),
    message: z.string().optional(),
  }),
);
export type ProUsage = z.infer<typeof ProUsage>;

/** POST pro/license/activate: the key is checked for its form only, and an error never repeats it. */
export const ProLicenseKey = lazySchema(() => z.object({ license_key: z.string().trim().pipe(LicenseKey) }).strict());
export const ProAccepted = lazySchema(() => z.looseObject({ success: z.literal(true) }));
