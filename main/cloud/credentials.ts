import { z } from 'zod';
import { LicenseKey } from '../contract/cloud/license.ts';
import type { Vault } from '../core/ports.ts';
import { PinnedKey } from './pinned-key.ts';

/**
 * The cloud credentials, only ever in the vault (the OS keychain, or the
 * 0600 file vault): the site identity (site id, key id, site secret), the
 * license key, and the pinned gateway key. A value that does not parse is
 * treated as absent (and reported by the caller), never half-used.
 */
export const VAULT_ACCOUNTS = {
  site: 'cloud-site',
  license: 'cloud-license-key',
  pin: 'cloud-pinned-key',
} as const;

export const SiteIdentity = z.object({
  site_id: z.string().min(1).max(64),
  key_id: z.string().min(1).max(200),
  secret: z.string().min(16).max(1000),
});
export type SiteIdentity = z.infer<typeof SiteIdentity>;

export class CloudCredentials {
  constructor(private readonly vault: Vault) {}

  async site(): Promise<SiteIdentity | null> {
    return this.json(VAULT_ACCOUNTS.site, SiteIdentity);
  }
  async pin(): Promise<PinnedKey | null> {
    return this.json(VAULT_ACCOUNTS.pin, PinnedKey);
  }
  async licenseKey(): Promise<string | null> {
    const v = await this.vault.get(VAULT_ACCOUNTS.license);
    return v !== null && LicenseKey.safeParse(v).success ? v : null;
  }

  async saveIdentity(site: SiteIdentity, pin: PinnedKey): Promise<void> {
    // The pin first: credentials without a pin would trust nothing, a pin without credentials is harmless.
    await this.vault.set(VAULT_ACCOUNTS.pin, JSON.stringify(PinnedKey.parse(pin)));
    await this.vault.set(VAULT_ACCOUNTS.site, JSON.stringify(SiteIdentity.parse(site)));
  }
  async saveLicenseKey(key: string): Promise<void> {
    await this.vault.set(VAULT_ACCOUNTS.license, LicenseKey.parse(key));
  }
  async forgetLicenseKey(): Promise<void> {
    await this.vault.delete(VAULT_ACCOUNTS.license);
  }
  /** Removes everything; the site identity first, so a crash part way leaves no usable identity behind. */
  async forgetAll(): Promise<void> {
    await this.vault.delete(VAULT_ACCOUNTS.site);
    await this.vault.delete(VAULT_ACCOUNTS.license);
    await this.vault.delete(VAULT_ACCOUNTS.pin);
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
