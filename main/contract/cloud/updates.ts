import { z } from 'zod';
import { lazySchema } from '../lazy-schema.ts';

/**
 * Releases and their signed manifests (docs/cloud-gateway-updates.md). The
 * manifest is signed like a grant certificate: the gateway's Ed25519 key over
 * the exact JSON bytes of the payload, carried as base64url, so the app
 * verifies it with the key it pinned from `GET keys` before it reads a field.
 */

/** No `-`: electron-updater's feed file names (`beta-mac.yml`, `latest-linux-arm64.yml`) use it as the separator. */
export const ReleaseChannel = lazySchema(() =>
  z.string().regex(/^[a-z][a-z0-9]{0,31}$/, 'a channel: lower-case letters and digits, at most 32'),
);
/** Semantic version without a leading v, as electron-updater compares them. */
export const ReleaseVersion = lazySchema(() =>
  z
    .string()
    .max(64)
    .regex(
      /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/,
      'a semantic version such as 1.4.0 or 2.0.0-beta.1',
    ),
);
/** A bare file name: no directory part, so it can be neither a path nor a URL of its own. */
export const ReleaseFileName = lazySchema(() =>
  z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$/,
      'a file name: letters, digits and . _ + -, at most 200, no directories',
    ),
);
export const ReleasePlatform = lazySchema(() => z.enum(['win', 'mac', 'linux']));
export type ReleasePlatform = z.infer<typeof ReleasePlatform>;
export const ReleaseArch = lazySchema(() => z.enum(['x64', 'arm64', 'ia32', 'armv7l', 'universal']));
export type ReleaseArch = z.infer<typeof ReleaseArch>;
/** base64 of the 64-byte SHA-512 digest, as electron-updater expects it. */
export const Sha512Base64 = lazySchema(() => z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'base64 of a SHA-512 digest'));

export const ReleaseFile = lazySchema(() =>
  z
    .object({
      name: ReleaseFileName,
      platform: ReleasePlatform,
      arch: ReleaseArch,
      size: z
        .number()
        .int()
        .nonnegative()
        .max(2 ** 40),
      sha512: Sha512Base64,
    })
    .strict(),
);
export type ReleaseFile = z.infer<typeof ReleaseFile>;

export const MANIFEST_TYPE = 'gatehouse.release-manifest';

/**
 * The product this app is released as. A signed manifest of any other product
 * (the gateway signs every product's releases with the same key) is never
 * offered as an update of this app.
 */
export const APP_PRODUCT = 'mcp';

export const ReleaseManifest = lazySchema(() =>
  z
    .object({
      type: z.literal(MANIFEST_TYPE),
      v: z.literal(1),
      product: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/),
      channel: ReleaseChannel,
      version: ReleaseVersion,
      released_at: z.iso.datetime(),
      /** share of sites offered this release, 0-100 (electron-updater's stagingPercentage) */
      staging_percentage: z.number().int().min(0).max(100),
      notes: z.string().max(20_000).nullable(),
      files: z
        .array(ReleaseFile)
        .min(1)
        .max(50)
        .refine((fs) => new Set(fs.map((f) => f.name)).size === fs.length, 'file names must be unique'),
      issued_at: z.iso.datetime(),
    })
    .strict(),
);
export type ReleaseManifest = z.infer<typeof ReleaseManifest>;

/** The same envelope as a grant certificate. */
export const SignedManifest = lazySchema(() =>
  z
    .object({
      payload: z.string().max(200_000),
      sig: z.string().max(200),
      alg: z.literal('ed25519'),
      kid: z.string().max(100),
    })
    .strict(),
);
export type SignedManifest = z.infer<typeof SignedManifest>;
