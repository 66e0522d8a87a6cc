import { expect } from 'vitest';
import { register, type SiteClient } from './client.ts';
import type { Harness } from './cloud-harness.ts';

export interface TestAccount {
  id: string;
  /** the account API key (gha_...) */
  key: string;
  license: string;
  sites: SiteClient[];
}

/** A license of `plan` (a new account), `n` production sites activated on it, and an account API key. */
export async function accountWithSites(h: Harness, plan: string, n: number): Promise<TestAccount> {
  const lic = await h.op<{ license_key: string; account_id: string }>('licenses.create', { plan });
  const sites: SiteClient[] = [];
  for (let i = 0; i < n; i++) {
    const s = await register(h.gateway);
    expect((await s.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
    sites.push(s);
  }
  const key = (await h.op<{ account_key: string }>('accounts.keys.create', { account: lic.account_id })).account_key;
  return { id: lic.account_id, key, license: lic.license_key, sites };
}
