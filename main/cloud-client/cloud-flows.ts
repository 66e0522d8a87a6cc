import type { LicenseView } from '../contract/cloud/license.ts';
import { GatehouseError } from '../core/errors.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { VERSION } from '../version.ts';
import { breakerProbeNow } from './breaker.ts';
import type { CertificateKeeper } from './certificate-keeper.ts';
import type { CloudApi } from './cloud-api.ts';
import { licenseFromSite, type CloudClientOptions, type SyncResult } from './cloud-client-types.ts';
import type { CallMode } from './cloud-http.ts';
import type { CloudRuntime } from './cloud-state.ts';
import type { CloudCredentials } from './credentials.ts';
import { nextRefreshAt } from './grant-policy.ts';
import type { ChangeGuard } from './cloud-turns.ts';
import type { UsageOutbox } from './usage-outbox.ts';

/** What the license and sync flows need of the CloudClient (cloud-client.ts runs them in turn, see ChangeGuard). */
export interface FlowParts {
  api: CloudApi;
  guard: ChangeGuard;
  creds: CloudCredentials;
  runtime: CloudRuntime;
  certs: CertificateKeeper;
  usage: UsageOutbox;
  log: Logger;
  clock: Clock;
  random: () => number;
  productsInUse: CloudClientOptions['productsInUse'];
  refreshFailed: () => Promise<void>;
}

export type LicenseAnswer = { license: LicenseView; request_id: string };

export async function activateLicense(f: FlowParts, licenseKey: string): Promise<LicenseAnswer> {
  const api = f.api;
  f.guard.notDisconnecting('the activation');
  const epoch = f.guard.epoch;
  // A refused key must not cost the key of the license in force: it goes back when the request fails.
  const previous = await f.creds.licenseKey();
  await f.creds.saveLicenseKey(licenseKey.trim()).catch((e: unknown) => {
    throw e instanceof GatehouseError
      ? e
      : new GatehouseError('invalid_value', 'the license key is not in the form ghl_ followed by 32 characters');
  });
  let ans;
  try {
    f.guard.still(epoch, 'the activation');
    ans = await api.licenseActivate(licenseKey.trim());
    f.guard.still(epoch, 'the activation');
  } catch (e) {
    // The vault failing here must not hide why the activation failed.
    await (
      previous === null || f.guard.epoch !== epoch ? f.creds.forgetLicenseKey() : f.creds.saveLicenseKey(previous)
    ).catch((v: unknown) =>
      f.log.error('cloud: the license key could not be put back after a failed activation', {
        reason: v instanceof Error ? v.message : String(v),
      }),
    );
    f.guard.still(epoch, 'the activation');
    throw await f.certs.notice(e);
  }
  await f.runtime.update((d) => void Object.assign(d, { license: ans.data.license, license_deactivated: false }));
  f.guard.still(epoch, 'the activation');
  await f.certs.accept(ans.data.certificate, ans.requestId);
  f.log.info('cloud: license activated', {
    key_preview: ans.data.license.key_preview,
    plan: ans.data.license.plan,
    request_id: ans.requestId,
  });
  return { license: ans.data.license, request_id: ans.requestId };
}

export async function deactivateLicense(f: FlowParts): Promise<LicenseAnswer> {
  const api = f.api;
  f.guard.notDisconnecting('the deactivation');
  const epoch = f.guard.epoch;
  const ans = await api.licenseDeactivate().catch(async (e: unknown) => {
    f.guard.still(epoch, 'the deactivation');
    throw await f.certs.notice(e);
  });
  f.guard.still(epoch, 'the deactivation');
  // The gateway let the license go: the licensed certificate goes first (here and in the state file), so a
  // failure or a kill in a later step leaves no paid grant behind, now or at the next start.
  await f.certs.drop();
  await f.creds.forgetLicenseKey();
  f.guard.still(epoch, 'the deactivation');
  await f.runtime.update((d) => void Object.assign(d, { license: ans.data.license, license_deactivated: true }));
  // The signed word that the license is gone, for the status screens (the gates already follow the free policy).
  const status = await api.licenseStatus().catch(() => null);
  f.guard.still(epoch, 'the deactivation');
  if (status) await f.certs.accept(status.data.certificate, status.requestId);
  return { license: ans.data.license, request_id: ans.requestId };
}

export async function syncSite(f: FlowParts, mode: CallMode): Promise<SyncResult> {
  const api = f.api;
  f.guard.notDisconnecting('the sync');
  const epoch = f.guard.epoch;
  if (mode === 'interactive') f.runtime.setBreaker(breakerProbeNow(f.runtime.breaker(), f.clock.now()));
  const outbox = await f.usage.flush(mode);
  f.guard.still(epoch, 'the sync');
  const now = new Date(f.clock.now()).toISOString();
  await f.runtime.update((d) => void (d.last_refresh_attempt = now));
  let ans;
  try {
    ans = await api.siteSync(
      { version: VERSION, products_in_use: f.productsInUse?.() ?? ['mcp'], outbox_depth: f.usage.depth },
      { mode },
    );
    f.guard.still(epoch, 'the sync');
  } catch (e) {
    f.guard.still(epoch, 'the sync');
    await f.refreshFailed();
    throw await f.certs.notice(e);
  }
  f.certs.siteRefusal = null;
  // The answer's server_time is not signed: the clock is taken from the certificate's issued_at (certificate-keeper.ts).
  const accepted = await f.certs.accept(ans.data.certificate, ans.requestId).then(
    () => true,
    () => false,
  );
  f.guard.still(epoch, 'the sync');
  const at = f.clock.now();
  await f.runtime.update((d) => {
    d.last_sync = new Date(at).toISOString();
    d.license = d.license && { ...d.license, ...licenseFromSite(ans.data.site.license) };
    if (accepted) Object.assign(d, { next_refresh_at: nextRefreshAt(at, f.random), refresh_failures: 0 });
  });
  if (!accepted) await f.refreshFailed();
  return { outbox, certificate: accepted ? 'accepted' : 'refused', request_id: ans.requestId };
}
