import type { Certificate, CertificatePayload } from '../contract/cloud/certificate.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { HeldCertificate } from './cloud-entitlements.ts';
import type { CloudRuntime } from './cloud-state.ts';
import { CloudClientError, isCloudClientError } from './errors.ts';
import { verifyCertificate, type Opened, type PinnedKey } from './pinned-key.ts';

/**
 * The pinned key and the last certificate it verified, and what the gateway
 * said about the site: a certificate is kept only when it verifies with the
 * pinned key, names this site (`site_id`) and is no older (`issued_at`) than
 * the newest one taken since connect; one whose license is not active (a
 * signed refusal) replaces the last one at once; one that does not pass
 * changes nothing and is said (a certificate signed for another site of the
 * same gateway, or an older one of ours replayed after a revoke, verifies
 * just as well). An `invalid_site` answer means the identity is gone, so
 * nothing is granted from the certificate any more.
 */
export class CertificateKeeper {
  pin: PinnedKey | null = null;
  held: HeldCertificate | null = null;
  /** why the last certificate offered was refused, until one is accepted */
  refusal: string | null = null;
  /** the gateway no longer accepts the site's key */
  siteRefusal: { code: string; message: string } | null = null;

  /** `issued_at` (ms) of the newest certificate taken since connect: an older one is a replay. Kept when `held` is dropped, and in the state file. */
  private newestIssuedMs = -Infinity;

  constructor(
    private readonly runtime: CloudRuntime,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** this site's id (from the identity in the vault), or null while there is none */
    private readonly siteId: () => string | null,
  ) {}

  /** At start: the pin from the vault, the certificate saved in the state file (verified again, for this site) and the newest `issued_at` taken. */
  load(pin: PinnedKey, saved: Certificate | null, newestIssuedAt: string | null): void {
    this.pin = pin;
    this.held = null;
    const mark = newestIssuedAt === null ? NaN : Date.parse(newestIssuedAt);
    this.newestIssuedMs = Number.isFinite(mark) ? mark : -Infinity;
    if (!saved) return;
    const v = this.open(saved);
    if (v.ok) this.take(saved, v.payload);
    else this.log.warn(`cloud: the saved certificate was not used: ${v.reason}`);
  }

  /** Keeps the certificate when it passes (see the class); else records why, keeps the held one, and throws signature_invalid. */
  async accept(cert: Certificate, requestId: string): Promise<void> {
    const v = this.open(cert);
    if (!v.ok) {
      this.refusal = v.reason;
      const message = `certificate refused: ${v.reason}`;
      this.runtime.recordError({
        at: new Date(this.clock.now()).toISOString(),
        operation: 'certificate',
        code: 'signature_invalid',
        message,
        request_id: requestId,
        attempts: 1,
        stopped: 'not_retryable',
        http_status: 200,
      });
      this.log.error(`cloud: ${message}`, { request_id: requestId });
      throw new CloudClientError('signature_invalid', message, {
        requestId,
        httpStatus: 200,
        retryable: false,
        attempts: 1,
        stopped: 'not_retryable',
      });
    }
    this.refusal = null;
    this.siteRefusal = null;
    // Only a certificate newer than any taken was just made by the gateway: its issued_at is the gateway's time now.
    const issued = Date.parse(v.payload.issued_at);
    if (issued > this.newestIssuedMs) this.runtime.takeSignedTime(issued, this.clock.now());
    this.take(cert, v.payload);
    const newest = new Date(this.newestIssuedMs).toISOString();
    await this.runtime.update(
      (d) => void Object.assign(d, { certificate: cert, newest_certificate_issued_at: newest }),
    );
  }

  /**
   * What a failed request means for the site; the error is passed on
   * unchanged. A certificate in the error (a signed refusal) goes through
   * `accept`, so one for another site or an older one is refused and recorded
   * the same way, never taken.
   */
  async notice(e: unknown): Promise<unknown> {
    if (!isCloudClientError(e)) return e;
    const cert = e.info.details?.certificate;
    if (cert && this.pin && verifyCertificate(cert, this.pin).ok)
      await this.accept(cert as Certificate, e.requestId ?? '').catch(() => undefined);
    if (e.cloudCode === 'invalid_site' && e.info.httpStatus !== null) {
      this.siteRefusal = { code: e.cloudCode, message: e.message };
      this.held = null;
    }
    return e;
  }

  /**
   * No certificate any more, here and in the state file (a license let go
   * without a signed word about it). The mark moves past the dropped one, so
   * it cannot be replayed back either (an equal `issued_at` passes otherwise).
   */
  async drop(): Promise<void> {
    this.held = null;
    if (Number.isFinite(this.newestIssuedMs)) this.newestIssuedMs += 1;
    const newest = Number.isFinite(this.newestIssuedMs) ? new Date(this.newestIssuedMs).toISOString() : null;
    await this.runtime.update(
      (d) => void Object.assign(d, { certificate: null, newest_certificate_issued_at: newest }),
    );
  }

  clear(): void {
    this.pin = this.held = null;
    this.refusal = this.siteRefusal = null;
    this.newestIssuedMs = -Infinity;
  }

  /** Verified with the pinned key, for this site, and not older than the newest taken. */
  private open(cert: unknown): Opened<CertificatePayload> {
    if (!this.pin) return { ok: false, reason: 'no gateway key is pinned (not connected)' };
    const v = verifyCertificate(cert, this.pin);
    if (!v.ok) return v;
    const site = this.siteId();
    if (site === null) return { ok: false, reason: 'there is no site identity to check it against (not connected)' };
    if (v.payload.site_id !== site)
      return {
        ok: false,
        reason: `it was signed for another site (${JSON.stringify(v.payload.site_id.slice(0, 64))}), not this one (${site})`,
      };
    const issued = Date.parse(v.payload.issued_at);
    if (!Number.isFinite(issued)) return { ok: false, reason: 'its issued_at is not a time' };
    if (issued < this.newestIssuedMs)
      return {
        ok: false,
        reason: `it was issued at ${v.payload.issued_at}, before the one already held (${new Date(this.newestIssuedMs).toISOString()}): an old certificate replayed`,
      };
    return v;
  }

  private take(cert: Certificate, payload: CertificatePayload): void {
    this.held = { kid: cert.kid, payload };
    this.newestIssuedMs = Math.max(this.newestIssuedMs, Date.parse(payload.issued_at));
  }
}
