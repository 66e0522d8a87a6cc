import type { Certificate } from '../contract/cloud/certificate.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { HeldCertificate } from './cloud-entitlements.ts';
import type { CloudRuntime } from './cloud-state.ts';
import { CloudClientError, isCloudClientError } from './errors.ts';
import { verifyCertificate, type PinnedKey } from './pinned-key.ts';

/**
 * The pinned key and the last certificate it verified, and what the gateway
 * said about the site: a certificate is kept only when it verifies with the
 * pinned key; one whose license is not active (a signed refusal) replaces the
 * last one at once; one that does not verify changes nothing and is said; an
 * `invalid_site` answer means the identity is gone, so nothing is granted
 * from the certificate any more.
 */
export class CertificateKeeper {
  pin: PinnedKey | null = null;
  held: HeldCertificate | null = null;
  /** why the last certificate offered was refused, until one is accepted */
  refusal: string | null = null;
  /** the gateway no longer accepts the site's key */
  siteRefusal: { code: string; message: string } | null = null;

  constructor(
    private readonly runtime: CloudRuntime,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** At start: the pin from the vault and the certificate saved in the state file, verified again. */
  load(pin: PinnedKey, saved: Certificate | null): void {
    this.pin = pin;
    this.held = null;
    if (!saved) return;
    const v = verifyCertificate(saved, pin);
    if (v.ok) this.held = { kid: saved.kid, payload: v.payload };
    else this.log.warn(`cloud: the saved certificate was not used: ${v.reason}`);
  }

  async accept(cert: Certificate, requestId: string): Promise<void> {
    const v = verifyCertificate(cert, this.pin!);
    if (!v.ok) {
      this.refusal = v.reason;
      const message = `certificate refused: ${v.reason}`;
      this.runtime.recordError({ at: new Date(this.clock.now()).toISOString(), operation: 'certificate', code: 'signature_invalid', message, request_id: requestId, attempts: 1, stopped: 'not_retryable', http_status: 200 });
      this.log.error(`cloud: ${message}`, { request_id: requestId });
      throw new CloudClientError('signature_invalid', message, { requestId, httpStatus: 200, retryable: false, attempts: 1, stopped: 'not_retryable' });
    }
    this.refusal = null;
    this.siteRefusal = null;
    this.held = { kid: cert.kid, payload: v.payload };
    await this.runtime.update((d) => void (d.certificate = cert));
  }

  /** What a failed request means for the site; the error is passed on unchanged. */
  async notice(e: unknown): Promise<unknown> {
    if (!isCloudClientError(e)) return e;
    const cert = e.info.details?.certificate;
    if (cert && this.pin && verifyCertificate(cert, this.pin).ok) await this.accept(cert as Certificate, e.requestId ?? '').catch(() => undefined);
    if (e.cloudCode === 'invalid_site' && e.info.httpStatus !== null) {
      this.siteRefusal = { code: e.cloudCode, message: e.message };
      this.held = null;
    }
    return e;
  }

  clear(): void {
    this.pin = this.held = null;
    this.refusal = this.siteRefusal = null;
  }
}
