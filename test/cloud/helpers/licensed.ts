import { register, type SiteClient } from './client.ts';
import type { Harness } from './cloud-harness.ts';

/** A new site of the harness's gateway with a license of `plan` activated on it. */
export async function licensedSite(h: Harness, plan = 'pro'): Promise<SiteClient> {
  const site = await register(h.gateway);
  const lic = await h.op<{ license_key: string }>('licenses.create', { plan });
  const r = await site.post('license/activate', { license_key: lic.license_key });
  if (r.status !== 200) throw new Error(`license/activate failed: ${r.status} ${JSON.stringify(r.body)}`);
  return site;
}
