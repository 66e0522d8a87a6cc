/**
 * Child of cloud-check-compare.ts: starts the reference cloud gateway of the
 * worktree at argv[2] (its own harness, so any commit's code) on PGlite, or on
 * the database URL argv[3], licenses one site and prints
 * {gateway, creds} as one JSON line; stops on SIGTERM.
 */
import { pathToFileURL } from 'node:url';
import type { startHarness as StartHarness } from '../cloud/helpers/cloud-harness.ts';
import { signHeaders } from '../cloud/helpers/sign.ts';

const root = process.argv[2];
if (!root) throw new Error('usage: cloud-check-server.ts <worktree> [database url]');
const { startHarness } = (await import(pathToFileURL(`${root}/test/cloud/helpers/cloud-harness.ts`).href)) as {
  startHarness: typeof StartHarness;
};
const h = await startHarness({
  rateLimits: { perAddress: 0, perSite: 0, register: 0 },
  databaseUrl: process.argv[3] || undefined,
});

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Record<string, string>> {
  const r = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${(await r.text()).slice(0, 200)}`);
  return (await r.json()) as Record<string, string>;
}
const reg = await post(
  `${h.gateway}/sites/register`,
  JSON.stringify({ url: 'https://bench.example', environment: 'production' }),
);
const creds = { key_id: reg.key_id!, secret: reg.secret! };
const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
const url = `${h.gateway}/license/activate`;
const body = JSON.stringify({ license_key: lic.license_key });
await post(url, body, signHeaders(creds, { method: 'POST', url, body }));
process.stdout.write(`${JSON.stringify({ gateway: h.gateway, creds })}\n`);
process.once('SIGTERM', () => void h.stop().finally(() => process.exit(0)));
