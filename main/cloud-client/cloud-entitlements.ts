import { FeatureKey } from '../contract/cloud/catalog.ts';
import type { CertificatePayload } from '../contract/cloud/certificate.ts';
import type { CertificateView } from '../contract/cloud-status.ts';
import type { Entitlement } from '../contract/entitlements.ts';
import { LocalEntitlements } from '../core/policy/local-entitlements.ts';
import type { EntitlementSource } from '../core/ports/ports.ts';
import type { Clock } from '../lib/clock.ts';
import { certificateValidity, decide, type Decision, type Validity } from './grant-policy.ts';

/** The last verified certificate, as the client holds it. */
export interface HeldCertificate {
  kid: string;
  payload: CertificatePayload;
}

export interface EntitlementDeps {
  clock: Clock;
  /** the verified certificate, or null (never connected, cleared, or refused at load) */
  certificate: () => HeldCertificate | null;
  /** gateway time minus local time */
  offsetMs: () => number;
  highWaterMs: () => number;
  /** a trusted time was seen: the high-water mark may move up */
  observeTime: (correctedNow: number) => void;
  /** the policy while unconnected, and the floor when the certificate cannot be used */
  local?: EntitlementSource;
}

/**
 * The EntitlementSource of main/core/ports/ports.ts over the last verified
 * certificate (grant-policy.ts says how it is read). No network: the gates
 * answer from what was verified, and the refresh runs in the background
 * (cloud-client.ts). Unconnected, or when the certificate cannot be used
 * (expired, clock set back, license not active), the local free policy
 * answers, so connecting never takes away what the free app does.
 */
export class CloudEntitlements implements EntitlementSource {
  private readonly local: EntitlementSource;

  constructor(private readonly deps: EntitlementDeps) {
    this.local = deps.local ?? new LocalEntitlements('free');
  }

  async check(feature: string): Promise<Entitlement> {
    return (await this.decide(feature)).entitlement;
  }

  /** The answer with who gave it and, for a refusal, its code (entitlement_required, product_inactive, license_*). */
  async decide(feature: string): Promise<Decision> {
    // Not a dotted feature key (e.g. `__proto__`): nothing grants it, and it is never looked up in a plain object.
    if (!FeatureKey.safeParse(feature).success)
      return {
        entitlement: { feature: String(feature).slice(0, 100), allowed: false, plan: 'pro', expires_at: null },
        source: 'local',
        code: 'entitlement_required',
      };
    const held = this.deps.certificate();
    const local = await this.local.check(feature);
    const now = this.now();
    const validity = held ? this.validity(held, now) : null;
    return decide(feature, held?.payload ?? null, validity, local, now);
  }

  /** What the console shows about the certificate, or null when there is none. */
  view(): CertificateView | null {
    const held = this.deps.certificate();
    if (!held) return null;
    const v = this.validity(held, this.now());
    const p = held.payload;
    return {
      kid: held.kid,
      issued_at: p.issued_at,
      cert_expires_at: p.cert_expires_at,
      grants_until: new Date(v.grantsUntil).toISOString(),
      usable: v.usable,
      reason: v.reason,
      license: p.license,
      update: p.update,
      products: { ...p.products },
    };
  }

  private now(): number {
    return this.deps.clock.now() + this.deps.offsetMs();
  }

  private validity(held: HeldCertificate, now: number): Validity {
    const v = certificateValidity(held.payload, { now, highWater: this.deps.highWaterMs() });
    // Only a time inside the certificate's window moves the mark: a clock set far ahead cannot push it.
    if (v.usable) this.deps.observeTime(now);
    return v;
  }
}
