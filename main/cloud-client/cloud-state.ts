import { join } from 'node:path';
import { z } from 'zod';
import { Certificate } from '../contract/cloud/certificate.ts';
import { LicenseView } from '../contract/cloud/license.ts';
import { Environment } from '../contract/cloud/sites.ts';
import { CloudErrorRecord, PreviousSite } from '../contract/cloud-status.ts';
import type { Logger } from '../lib/logger.ts';
import { JsonFileStore } from '../store/json-file-store.ts';
import { BreakerState, CLOSED } from './breaker.ts';
import type { PolicyState } from './cloud-http.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

/**
 * The cloud client's own small store, `cloud-state.json` in the data dir:
 * everything that is not a secret (gateway URL, environment, the pinned
 * key's fingerprint, the last verified certificate as signed, last sync,
 * refresh schedule, breaker, clock offset, last errors). Credentials live in
 * the vault (credentials.ts). The certificate is verified again when loaded,
 * so editing this file grants nothing.
 */
export const CLOUD_STATE_FILE = 'cloud-state.json';
export const MAX_ERRORS = 20;

export const Connection = lazySchema(() =>
  z.object({
    gateway_url: z.string().max(2048),
    environment: Environment,
    site_url: z.string().max(2048),
    connected_at: z.string(),
    pin: z.object({
      fingerprint: z.string().max(200),
      kid: z.string().max(100).nullable(),
      source: z.enum(['explicit', 'fetched']),
    }),
    /** connecting: registered, credentials maybe not yet in the vault; disconnecting: on the way out */
    phase: z.enum(['connecting', 'connected', 'disconnecting']),
  }),
);
export type Connection = z.infer<typeof Connection>;

export const CloudStateDoc = lazySchema(() =>
  z.object({
    version: z.literal(1),
    connection: Connection.nullable(),
    certificate: Certificate.nullable(),
    /**
     * `issued_at` of the newest certificate taken since connect: an older one is
     * a replay. Kept apart from `certificate`, which may be dropped, so the mark
     * holds across restarts.
     */
    newest_certificate_issued_at: z.string().max(64).nullable().default(null),
    /** the license as the last license answer showed it (display only; grants come from the certificate) */
    license: LicenseView.nullable(),
    /** the license was deactivated on this site and none activated since (the free plan applies: said so, not "invalid") */
    license_deactivated: z.boolean().default(false),
    last_sync: z.string().nullable(),
    last_refresh_attempt: z.string().nullable(),
    next_refresh_at: z.number().nullable(),
    refresh_failures: z.number().int().nonnegative(),
    clock: z.object({
      /** gateway time minus local time, learned from signed data only (a fresh certificate's issued_at): the gates read time with it */
      offset_ms: z.number(),
      /**
       * the offset requests are signed and usage events stamped with: also moved by the unsigned server_time of a
       * token_expired answer (a forged one can only make our own requests fail, which a man in the middle can anyway)
       */
      signing_offset_ms: z.number().optional(),
      /** the latest trusted time seen (corrected): a local time well before it means the clock was set back */
      high_water_ms: z.number(),
    }),
    breaker: BreakerState,
    last_errors: z.array(CloudErrorRecord).max(MAX_ERRORS),
    /** the site before the current one (or none), as history: see CloudClientStatus.previous_site */
    previous_site: PreviousSite.nullable().default(null),
  }),
);
export type CloudStateDoc = z.infer<typeof CloudStateDoc>;

/** What a site's state is reset to when it connects or is forgotten (the connection itself is set apart). */
export const NO_SITE_STATE = {
  certificate: null,
  newest_certificate_issued_at: null,
  license: null,
  license_deactivated: false,
  last_sync: null,
  last_refresh_attempt: null,
  next_refresh_at: null,
  refresh_failures: 0,
} as const satisfies Partial<CloudStateDoc>;

const defaults = (): CloudStateDoc => ({
  version: 1,
  connection: null,
  ...NO_SITE_STATE,
  clock: { offset_ms: 0, high_water_ms: 0 },
  breaker: CLOSED,
  last_errors: [],
  previous_site: null,
});

/** How far the high-water mark may lag the time seen before it is written down again. */
const HIGH_WATER_PERSIST_STEP_MS = 10 * 60_000;

/**
 * The store plus the few fields the request policy moves on every call
 * (offset, breaker, errors, high-water time): those change in memory at
 * once and are written behind, in order, by the store's serialized updates.
 */
export class CloudRuntime implements PolicyState {
  private live: Pick<CloudStateDoc, 'clock' | 'breaker' | 'last_errors'>;
  private persistedHighWater: number;

  private constructor(
    private readonly store: JsonFileStore<CloudStateDoc>,
    private readonly log: Logger,
  ) {
    const d = store.read();
    this.live = { clock: { ...d.clock }, breaker: { ...d.breaker }, last_errors: [...d.last_errors] };
    this.persistedHighWater = d.clock.high_water_ms;
  }

  static async open(dataDir: string, log: Logger): Promise<CloudRuntime> {
    const store = await JsonFileStore.open({
      file: join(dataDir, CLOUD_STATE_FILE),
      schema: CloudStateDoc,
      defaults,
      log,
    });
    return new CloudRuntime(store, log);
  }

  /** The committed document, with the live fields as they are now. */
  doc(): CloudStateDoc {
    return { ...this.store.read(), ...this.live };
  }

  /** Changes the document (and writes the live fields with it); resolves once it is on disk. */
  update<R>(mutate: (draft: CloudStateDoc) => R): Promise<R> {
    return this.store.update((d) => {
      Object.assign(d, structuredClone(this.live));
      return mutate(d);
    });
  }

  flush(): Promise<void> {
    return this.store.flush();
  }

  /** The signing offset (see the document): what a request's `created` and a usage event's time are moved by. */
  offsetMs(): number {
    return this.live.clock.signing_offset_ms ?? this.live.clock.offset_ms;
  }

  /** The offset learned from signed data: what the feature gates read time with. */
  trustedOffsetMs(): number {
    return this.live.clock.offset_ms;
  }

  /** An unsigned server_time (token_expired): it moves the signing offset only, never the gates' time nor the high-water mark. */
  resyncClock(serverTimeMs: number, localNowMs: number): void {
    this.live.clock = { ...this.live.clock, signing_offset_ms: serverTimeMs - localNowMs };
    this.persist();
  }

  /**
   * A signed time (the issued_at of a certificate newer than any taken, so just made by the gateway): both
   * offsets follow it; the high-water mark only ever moves up.
   */
  takeSignedTime(signedMs: number, localNowMs: number): void {
    const offset = signedMs - localNowMs;
    this.live.clock = {
      offset_ms: offset,
      signing_offset_ms: offset,
      high_water_ms: Math.max(this.live.clock.high_water_ms, signedMs),
    };
    this.persist();
  }

  highWaterMs(): number {
    return this.live.clock.high_water_ms;
  }

  /** A trusted corrected time was seen (the clock was not set back): move the mark up. */
  observeTime(correctedNowMs: number): void {
    if (correctedNowMs <= this.live.clock.high_water_ms) return;
    this.live.clock = { ...this.live.clock, high_water_ms: correctedNowMs };
    if (correctedNowMs - this.persistedHighWater >= HIGH_WATER_PERSIST_STEP_MS) this.persist();
  }

  breaker(): BreakerState {
    return this.live.breaker;
  }

  setBreaker(s: BreakerState): void {
    this.live.breaker = s;
    this.persist();
  }

  /** Another site (or none) from now: the old one's breaker and request errors are not its (the next update writes it). */
  forgetSite(): void {
    this.live.breaker = CLOSED;
    this.live.last_errors = [];
  }

  recordError(r: CloudErrorRecord): void {
    this.live.last_errors = [r, ...this.live.last_errors].slice(0, MAX_ERRORS);
    this.persist();
  }

  lastErrors(): readonly CloudErrorRecord[] {
    return this.live.last_errors;
  }

  private persist(): void {
    this.persistedHighWater = this.live.clock.high_water_ms;
    this.update(() => undefined).catch((e: unknown) =>
      this.log.warn('cloud: could not save the client state', { error: (e as Error).message }),
    );
  }
}
