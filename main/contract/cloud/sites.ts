import { z } from 'zod';
import { Certificate, LicenseStatus } from './certificate.ts';
import { CloudProduct } from './catalog.ts';
import { nameText } from './names.ts';
import { lazySchema } from '../lazy-schema.ts';

export const Environment = lazySchema(() => z.enum(['production', 'staging']));
export type Environment = z.infer<typeof Environment>;

/** POST sites/register (unsigned, rate-limited per address). */
export const RegisterBody = lazySchema(() =>
  z.strictObject({
    url: z.url({ protocol: /^https?$/ }).max(2048),
    environment: Environment,
    name: nameText(200).optional(),
  }),
);
export type RegisterBody = z.infer<typeof RegisterBody>;

/** The only answer that ever carries the secret; the site keeps it in its vault. */
export const RegisterAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    site_id: z.string(),
    key_id: z.string(),
    secret: z.string(),
    environment: Environment,
  }),
);
export type RegisterAnswer = z.infer<typeof RegisterAnswer>;

export const SiteInfo = lazySchema(() =>
  z.object({
    site_id: z.string(),
    url: z.string(),
    name: z.string().nullable(),
    environment: Environment,
    status: z.enum(['active', 'disconnected']),
    account_id: z.string().nullable(),
    license: z.object({
      status: LicenseStatus,
      plan: z.string().nullable(),
      key_preview: z.string().nullable(),
      expires_at: z.string().nullable(),
    }),
    version: z.string().nullable(),
    products_in_use: z.array(CloudProduct),
    outbox_depth: z.number().int().nullable(),
    last_sync_at: z.string().nullable(),
    registered_at: z.string(),
    /** the support priority of the site's account or plan (`p1` first), null without a license */
    support_priority: z.string().nullable().optional(),
  }),
);
export type SiteInfo = z.infer<typeof SiteInfo>;

/** GET sites/status */
export const SiteStatusAnswer = lazySchema(() =>
  z.object({ success: z.literal(true), site: SiteInfo, server_time: z.string() }),
);

/** POST sites/sync: what the site reports about itself. */
export const SyncBody = lazySchema(() =>
  z.strictObject({
    version: z
      .string()
      .max(64)
      .regex(/^[\x21-\x7e]+$/, 'a version without spaces'),
    products_in_use: z.array(CloudProduct).max(5).default([]),
    outbox_depth: z.number().int().nonnegative().max(1_000_000_000).default(0),
  }),
);
export type SyncBody = z.infer<typeof SyncBody>;
export const SyncAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    site: SiteInfo,
    certificate: Certificate,
    server_time: z.string(),
  }),
);

/** POST sites/disconnect: the key stops working at once. */
export const DisconnectAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    site_id: z.string(),
    status: z.literal('disconnected'),
  }),
);
