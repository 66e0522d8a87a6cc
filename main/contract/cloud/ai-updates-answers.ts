import { z } from 'zod';
import { ReleaseChannel, ReleaseFileName, ReleaseVersion, Sha512Base64, SignedManifest } from './updates.ts';
import { lazySchema } from '../lazy-schema.ts';

/**
 * The AI and update endpoints (`ai/*`, `updates/*`) as the app's
 * cloud client calls them. The request shapes of docs/cloud-gateway.md "AI"
 * are in ai.ts; the answers of `ai/providers`, `ai/models` and `updates/*`
 * are not fixed anywhere yet, so these are the client's reading of the spec
 * and of docs/cloud-gateway-updates.md: objects are loose (extra fields
 * pass), so the gateway can add to them without breaking the client.
 */
export const CLOUD_AI_UPDATES_ENDPOINTS = {
  aiProviders: { method: 'GET', path: 'ai/providers', signed: true },
  aiModels: { method: 'GET', path: 'ai/models', signed: true },
  aiRoute: { method: 'POST', path: 'ai/route', signed: true },
  aiGenerate: { method: 'POST', path: 'ai/generate', signed: true },
  updatesCheck: { method: 'GET', path: 'updates/check', signed: true },
  updatesPackage: { method: 'GET', path: 'updates/package', signed: true },
  updatesVerify: { method: 'POST', path: 'updates/verify', signed: true },
  /**
   * The electron-updater generic feed and the release files, behind a
   * short-lived download token (not a signature: the updater cannot sign).
   * `updates/check` and `updates/package` answer URLs under it.
   */
  updatesFiles: { method: 'GET', path: 'updates/files/:token/:name', signed: false },
} as const satisfies Record<string, { method: 'GET' | 'POST'; path: string; signed: boolean }>;
export type CloudAiUpdatesEndpoint = keyof typeof CLOUD_AI_UPDATES_ENDPOINTS;

/** GET ai/providers: what the site's policy allows (never a URL or a key variable). */
export const AiProvidersAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    providers: z.array(
      z.looseObject({ id: z.string(), models: z.array(z.string()).default([]), tags: z.array(z.string()).default([]) }),
    ),
  }),
);
export type AiProvidersAnswer = z.infer<typeof AiProvidersAnswer>;

/** GET ai/models */
export const AiModelsAnswer = lazySchema(() =>
  z.object({
    success: z.literal(true),
    models: z.array(z.looseObject({ id: z.string(), provider: z.string().optional() })),
  }),
);
export type AiModelsAnswer = z.infer<typeof AiModelsAnswer>;

/** Query of updates/check and updates/package. */
export const UpdatesQuery = lazySchema(() =>
  z.strictObject({
    product: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/)
      .default('mcp'),
    version: ReleaseVersion,
    channel: ReleaseChannel.optional(),
    platform: z.enum(['win', 'mac', 'linux']).optional(),
    arch: z.enum(['x64', 'arm64', 'ia32', 'armv7l', 'universal']).optional(),
  }),
);
export type UpdatesQuery = z.input<typeof UpdatesQuery>;

/** GET updates/check: eligibility, and the signed manifest of the newest release when there is one. */
export const UpdatesCheckAnswer = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    channel: z.string(),
    eligible: z.boolean(),
    update_available: z.boolean(),
    manifest: SignedManifest.nullable().default(null),
  }),
);
export type UpdatesCheckAnswer = z.infer<typeof UpdatesCheckAnswer>;

/** GET updates/package: the manifest again, with download URLs that carry the site's signature and expire. */
export const UpdatesPackageAnswer = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    manifest: SignedManifest,
    files: z.array(
      z.looseObject({
        name: ReleaseFileName,
        url: z.string().max(4096),
        expires_at: z.string().nullable().default(null),
      }),
    ),
  }),
);
export type UpdatesPackageAnswer = z.infer<typeof UpdatesPackageAnswer>;

/**
 * POST updates/verify: does a downloaded file hash to what the manifest
 * signed? With `manifest`, that signed manifest is checked (signature by a
 * published gateway key, then the file); without it, the release the
 * gateway published as product + version.
 */
export const UpdatesVerifyBody = lazySchema(() =>
  z.strictObject({
    product: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/)
      .default('mcp'),
    version: ReleaseVersion,
    name: ReleaseFileName,
    sha512: Sha512Base64,
    size: z
      .number()
      .int()
      .nonnegative()
      .max(2 ** 40),
    manifest: SignedManifest.optional(),
  }),
);
export type UpdatesVerifyBody = z.input<typeof UpdatesVerifyBody>;
export const UpdatesVerifyAnswer = lazySchema(() =>
  z.looseObject({
    success: z.literal(true),
    valid: z.boolean(),
    reason: z.string().nullable().default(null),
  }),
);
export type UpdatesVerifyAnswer = z.infer<typeof UpdatesVerifyAnswer>;
