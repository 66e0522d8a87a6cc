import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { z } from 'zod';
import { LicenseKey } from '../contract/cloud/license.ts';
import type { Vault } from '../core/ports/ports.ts';
import { PinnedKey } from './pinned-key.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * The cloud credentials, only ever in the vault (the OS keychain, or the
 * 0600 file vault): the site identity (site id, key id, site secret), the
 * license key, and the pinned gateway key. A value that does not parse is
 * treated as absent (and reported by the caller), never half-used.
 */
const ACCOUNTS = { site: 'cloud-site', license: 'cloud-license-key', pin: 'cloud-pinned-key' } as const;

/**
 * Vault account names, scoped to the data dir: two installs of one OS user
 * (a production and a staging data dir) keep separate site identities, as
 * the spec asks of staging sites.
 */
export function vaultAccounts(dataDir: string): Record<keyof typeof ACCOUNTS, string> {
  const scope = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 12);
  return {
    site: `${ACCOUNTS.site}@${scope}`,
    license: `${ACCOUNTS.license}@${scope}`,
    pin: `${ACCOUNTS.pin}@${scope}`,
  };
}

export const SiteIdentity = lazySchema(() =>
  z.object({
    site_id: z.string().min(1).max(64),
    key_id: z.string().min(1).max(200),
    secret: z.string().min(16).max(1000),
  }),
);
export type SiteIdentity = z.infer<typeof SiteIdentity>;

export class CloudCredentials {
  private readonly accounts: Record<keyof typeof ACCOUNTS, string>;
  constructor(
    private readonly vault: Vault,
    dataDir: string,
  ) {
    this.accounts = vaultAccounts(dataDir);
  }

  async site(): Promise<SiteIdentity | null> {
    return this.json(this.accounts.site, SiteIdentity);
  }
  async pin(): Promise<PinnedKey | null> {
    return this.json(this.accounts.pin, PinnedKey);
  }
  async licenseKey(): Promise<string | null> {
    const v = await this.vault.get(this.accounts.license);
    return v !== null && LicenseKey.safeParse(v).success ? v : null;
  }

  async saveIdentity(site: SiteIdentity, pin: PinnedKey): Promise<void> {
    // The pin first: credentials without a pin would trust nothing, a pin without credentials is harmless.
    await this.vault.set(this.accounts.pin, JSON.stringify(PinnedKey.parse(pin)));
    await this.vault.set(this.accounts.site, JSON.stringify(SiteIdentity.parse(site)));
  }
  async saveLicenseKey(key: string): Promise<void> {
    await this.vault.set(this.accounts.license, LicenseKey.parse(key));
  }
  async forgetLicenseKey(): Promise<void> {
    await this.vault.delete(this.accounts.license);
  }
  /** Removes everything; the site identity first, so a crash part way leaves no usable identity behind. */
  async forgetAll(): Promise<void> {
    await this.vault.delete(this.accounts.site);
    await this.vault.delete(this.accounts.license);
    await this.vault.delete(this.accounts.pin);
  }

  private async json<T>(account: string, schema: z.ZodType<T>): Promise<T | null> {
    const raw = await this.vault.get(account);
    if (raw === null) return null;
    try {
      const parsed = schema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }
}
