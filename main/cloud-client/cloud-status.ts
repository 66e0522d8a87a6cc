import { CLOUD_PRODUCTS } from '../contract/cloud/catalog.ts';
import type { CertificateView, CloudClientStatus, OutboxView } from '../contract/cloud-status.ts';
import type { CloudHealth, Warning } from '../contract/health.ts';
import { breakerView } from './breaker.ts';
import type { CloudStateDoc } from './cloud-state.ts';
import { STALE_WARN_MS } from './grant-policy.ts';

/**
 * The client's status in the health report's shape (README.md) plus what a person
 * needs to act: certificate expiry, outbox depth, breaker, the last errors
 * with their request ids, and warnings that say what to do. No network.
 */
/** Unconnected, the local free policy: the MCP gateway itself, nothing of the paid products (as main/health-report.ts reports today). */
export const UNCONNECTED_PRODUCTS: Readonly<Record<(typeof CLOUD_PRODUCTS)[number], string>> = {
  aeo: 'inactive',
  code: 'inactive',
  verto: 'inactive',
  mcp: 'active',
  pro: 'inactive',
};

export interface StatusInput {
  doc: CloudStateDoc;
  connected: boolean;
  siteId: string | null;
  certificate: CertificateView | null;
  outbox: OutboxView;
  now: number;
  certRefusal: string | null;
  siteRefusal: { code: string; message: string } | null;
}

/**
 * The license in one word. The gateway's certificate says `invalid` with no key for a site that holds no
 * license: never activated (`none`) or let go here (`deactivated`, the last license answer had one); the free
 * plan applies, which is no fault.
 */
export function licenseState(doc: CloudStateDoc, cert: CertificateView | null): CloudClientStatus['license_state'] {
  const l = cert?.license ?? doc.license;
  if (!l) return doc.license_deactivated ? 'deactivated' : 'none';
  if (l.status !== 'active' && !l.key_preview) return doc.license_deactivated ? 'deactivated' : 'none';
  return l.status === 'active' || l.status === 'expired' || l.status === 'invalid' ? l.status : 'unknown';
}

const FREE = new Set(['none', 'deactivated']);

export function buildStatus(i: StatusInput): CloudClientStatus {
  const { doc, connected, certificate: cert, outbox } = i;
  const breaker = breakerView(doc.breaker, i.now);
  const license = licenseState(doc, cert);
  // No license: the free plan's products (the local policy answers), not the certificate's list of all inactive.
  const free = !connected || FREE.has(license);
  const productsFromCert = cert && (cert.usable || cert.reason === 'license_not_active');
  const products: Record<string, string> = {};
  for (const p of CLOUD_PRODUCTS)
    products[p] = free ? UNCONNECTED_PRODUCTS[p] : productsFromCert ? (cert.products[p] ?? 'unknown') : 'unknown';
  const health: CloudHealth = {
    success: connected && !i.siteRefusal,
    gateway: {
      connected: connected && !i.siteRefusal && breaker.state !== 'open',
      last_sync: doc.last_sync,
      license: !connected ? 'not_connected' : license,
      entitlements: !connected
        ? 'local'
        : !cert
          ? 'pending'
          : cert.reason === 'ok'
            ? 'synced'
            : cert.reason === 'license_not_active'
              ? 'local'
              : cert.reason,
      usage: !connected ? 'local' : outbox.full ? 'full' : outbox.depth > 0 ? 'pending' : 'synced',
      cloud_token: !connected ? 'none' : i.siteRefusal ? 'invalid' : 'valid',
    },
    products: products as CloudHealth['products'],
  };
  return {
    health,
    connected,
    gateway_url: doc.connection?.gateway_url ?? null,
    environment: doc.connection?.environment ?? null,
    site_id: i.siteId,
    pinned_key: doc.connection ? { kid: doc.connection.pin.kid, fingerprint: doc.connection.pin.fingerprint } : null,
    certificate: cert,
    license_state: license,
    products,
    last_sync: doc.last_sync,
    last_refresh_attempt: doc.last_refresh_attempt,
    next_refresh_at: doc.next_refresh_at === null ? null : new Date(doc.next_refresh_at).toISOString(),
    outbox,
    breaker,
    clock: { offset_ms: doc.clock.offset_ms, set_back: cert?.reason === 'clock_set_back' },
    last_errors: doc.last_errors.slice(0, 10),
    warnings: connected ? warnings(i, breaker.state === 'open' ? breaker.open_until : null) : [],
    previous_site: doc.previous_site,
  };
}

function warnings(i: StatusInput, openUntil: string | null): Warning[] {
  const out: Warning[] = [];
  const cert = i.certificate;
  const last = i.doc.last_errors[0];
  const ref = last ? ` (last error ${last.code}, request id ${last.request_id})` : '';
  if (i.siteRefusal)
    out.push({
      code: 'cloud_site_refused',
      message: `The gateway no longer accepts this site's key (${i.siteRefusal.code}): it was disconnected there. Local features work on the free policy; disconnect and connect again.`,
    });
  if (i.certRefusal)
    out.push({ code: 'cloud_certificate_refused', message: `The gateway's certificate was refused: ${i.certRefusal}` });
  if (openUntil)
    out.push({
      code: 'cloud_gateway_unreachable',
      message: `The cloud gateway failed repeatedly; the client waits until ${openUntil} before trying again${ref}. Local features keep working.`,
    });
  if (cert?.reason === 'stale') {
    out.push({
      code: 'cloud_certificate_stale',
      message: `No fresh certificate for more than ${STALE_WARN_MS / 3600_000} hours (issued ${cert.issued_at}); paid features stop at ${cert.grants_until} unless a sync succeeds${ref}. Check the connection and run gatehouse cloud sync.`,
    });
  }
  if (cert?.reason === 'expired')
    out.push({
      code: 'cloud_certificate_expired',
      message: `The certificate ran out at ${cert.grants_until}: paid features are off until a sync succeeds${ref}. Local free features keep working.`,
    });
  if (cert?.reason === 'clock_set_back')
    out.push({
      code: 'cloud_clock_set_back',
      message:
        "This computer's clock is earlier than the last certificate or the last trusted time: paid features are off until the clock is right and a sync succeeds.",
    });
  // No license (never activated, or deactivated here) is the free plan, not a fault: the status says it, no warning.
  if (cert?.reason === 'license_not_active' && cert.license.key_preview)
    out.push({
      code: 'cloud_license_inactive',
      message: `The license is ${cert.license.status}: the site is on the free policy. Activate a license (gatehouse cloud activate LICENSE_KEY).`,
    });
  if (i.connected && !cert && !i.siteRefusal)
    out.push({
      code: 'cloud_certificate_missing',
      message: `No certificate from the gateway yet${ref}: run gatehouse cloud sync.`,
    });
  if (i.outbox.full)
    out.push({
      code: 'cloud_outbox_full',
      message: `The usage outbox is full (${i.outbox.capacity} events): ${i.outbox.refused_full} event(s) were refused. They are counted in the log; reconnect to the gateway so the outbox can drain.`,
    });
  if (i.doc.refresh_failures > 0 && !openUntil)
    out.push({
      code: 'cloud_sync_failed',
      message: `The last ${i.doc.refresh_failures} sync(s) failed${ref}; local features keep working and the client tries again.`,
    });
  return out;
}
