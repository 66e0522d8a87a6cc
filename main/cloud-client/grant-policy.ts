import { DEFAULT_PLAN_FEATURES, DEFAULT_PLAN_ORDER, FEATURE_CATALOG } from '../contract/cloud/catalog.ts';
import type { CertificatePayload } from '../contract/cloud/certificate.ts';
import type { CertificateView } from '../contract/cloud-status.ts';
import type { Entitlement } from '../contract/entitlements.ts';

/**
 * How the feature gates read the last verified certificate (docs/cloud-client.md
 * "Behaviour in short", Certificates), pure. Times are the client's corrected time (local
 * clock plus the offset learned from the gateway).
 *
 * - Grants stop at the earlier of `cert_expires_at` and 7 days after the
 *   certificate's `issued_at` (the gateway's own time, so a refresh that
 *   did not happen cannot be faked by the local clock).
 * - After 72 hours without a fresh certificate it still grants, with a warning.
 * - A time before the certificate's `issued_at`, or before the latest
 *   trusted time seen, means the clock was set back: nothing is granted
 *   from the certificate until a refresh (which re-syncs the clock) succeeds.
 * - A certificate whose license is not active is a signed refusal: the
 *   site is back on the local free policy.
 */
export const REFRESH_EVERY_MS = 24 * 3600_000;
/** the daily refresh comes up to this much early, so sites spread out */
export const REFRESH_JITTER_MS = 2 * 3600_000;
export const STALE_WARN_MS = 72 * 3600_000;
export const MAX_OFFLINE_MS = 7 * 24 * 3600_000;
/** small clock differences (NTP steps, the gateway's own jitter) are not "set back" */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

export interface TimeFacts {
  /** corrected now */
  now: number;
  /** the latest trusted time seen */
  highWater: number;
}

export interface Validity {
  usable: boolean;
  reason: CertificateView['reason'];
  grantsUntil: number;
  issuedAt: number;
}

export function certificateValidity(p: CertificatePayload, t: TimeFacts): Validity {
  const issuedAt = Date.parse(p.issued_at);
  const expires = Date.parse(p.cert_expires_at);
  const grantsUntil = Math.min(Number.isFinite(expires) ? expires : issuedAt, issuedAt + MAX_OFFLINE_MS);
  const v = (usable: boolean, reason: Validity['reason']): Validity => ({ usable, reason, grantsUntil, issuedAt });
  if (!Number.isFinite(issuedAt)) return v(false, 'expired');
  if (t.now < issuedAt - CLOCK_TOLERANCE_MS || t.now < t.highWater - CLOCK_TOLERANCE_MS)
    return v(false, 'clock_set_back');
  if (t.now >= grantsUntil) return v(false, 'expired');
  if (p.license.status !== 'active') return v(false, 'license_not_active');
  if (t.now - issuedAt >= STALE_WARN_MS) return v(true, 'stale');
  return v(true, 'ok');
}

export type RefusalCode = 'entitlement_required' | 'product_inactive' | 'license_expired' | 'license_invalid';

export interface Decision {
  entitlement: Entitlement;
  /** who decided: the verified certificate, or the local free policy */
  source: 'certificate' | 'local';
  /** why a refused feature is refused */
  code: RefusalCode | null;
}

/** A plan's place in DEFAULT_PLAN_ORDER; -1 for a plan it does not know. */
const planRank = (plan: string): number => DEFAULT_PLAN_ORDER.findIndex((p) => p === plan);

/** The lowest default plan that includes the feature (the certificate does not carry it). */
export function requiredPlanOf(feature: string): string {
  for (const plan of DEFAULT_PLAN_ORDER) if (DEFAULT_PLAN_FEATURES[plan].includes(feature)) return plan;
  return 'pro';
}

export function decide(
  feature: string,
  cert: CertificatePayload | null,
  validity: Validity | null,
  local: Entitlement,
  now: number,
): Decision {
  const fromLocal = (): Decision => {
    if (local.allowed) return { entitlement: local, source: 'local', code: null };
    // A certificate with no key holds no license (never activated, or deactivated): the free plan, not a revoked license.
    const status =
      cert && validity?.reason === 'license_not_active' && cert.license.key_preview ? cert.license.status : null;
    return {
      entitlement: local,
      source: 'local',
      code:
        status === 'expired' ? 'license_expired' : status === 'invalid' ? 'license_invalid' : 'entitlement_required',
    };
  };
  if (!cert || !validity?.usable) return fromLocal();
  const e = cert.entitlements.find((x) => x.feature === feature);
  if (!e) return fromLocal();
  const plan = cert.license.plan ?? e.plan;
  if (e.allowed) {
    if (e.expires_at !== null && Date.parse(e.expires_at) <= now) {
      return {
        entitlement: { feature, allowed: false, plan, expires_at: e.expires_at },
        source: 'certificate',
        code: 'license_expired',
      };
    }
    return {
      entitlement: { feature, allowed: true, plan: e.plan, expires_at: e.expires_at },
      source: 'certificate',
      code: null,
    };
  }
  const product = FEATURE_CATALOG.find((f) => f.key === feature)?.product;
  const required = requiredPlanOf(feature);
  const planIncludes = planRank(plan) >= planRank(required) && planRank(plan) >= 0;
  if (product && cert.products[product] === 'inactive' && planIncludes) {
    return {
      entitlement: { feature, allowed: false, plan, expires_at: e.expires_at },
      source: 'certificate',
      code: 'product_inactive',
    };
  }
  return {
    entitlement: { feature, allowed: false, plan: required, expires_at: e.expires_at },
    source: 'certificate',
    code: 'entitlement_required',
  };
}

/** The daily refresh time after a success at `at`: 24 h less up to 2 h at random. */
export function nextRefreshAt(at: number, random: () => number = Math.random): number {
  return at + REFRESH_EVERY_MS - Math.floor(random() * REFRESH_JITTER_MS);
}

/** After a failed refresh: try again in 5 min, doubling to at most 1 h (the request policy and breaker bound each try). */
export function retryRefreshAt(at: number, failures: number, random: () => number = Math.random): number {
  const base = Math.min(5 * 60_000 * 2 ** Math.max(0, failures - 1), 3600_000);
  return at + Math.floor(base * (0.75 + random() * 0.25));
}
