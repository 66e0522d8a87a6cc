import { join } from 'node:path';
import type { LicenseView } from '../contract/cloud/license.ts';
import type { ReleaseManifest } from '../contract/cloud/updates.ts';
import type { CloudClientStatus } from '../contract/cloud-status.ts';
import { GatehouseError } from '../core/errors.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { createLogger } from '../lib/logger.ts';
import { CloudApi } from './cloud-api.ts';
import { CertificateKeeper } from './certificate-keeper.ts';
import {
  failure,
  type CloudClientOptions,
  type ConnectInput,
  type ConnectResult,
  type DisconnectResult,
  type SyncResult,
} from './cloud-client-types.ts';
import { CloudEntitlements } from './cloud-entitlements.ts';
import { CloudHttp, type CallMode } from './cloud-http.ts';
import { CloudRuntime, NO_SITE_STATE } from './cloud-state.ts';
import { buildStatus } from './cloud-status.ts';
import { CloudCredentials, type SiteIdentity } from './credentials.ts';
import { CloudClientError } from './errors.ts';
import { normalizeGatewayUrl } from './gateway-url.ts';
import { retryRefreshAt } from './grant-policy.ts';
import { fingerprintOf, firstKey, parsePublicKey, verifyManifest, type Opened } from './pinned-key.ts';
import { UsageOutbox } from './usage-outbox.ts';
import { ChangeGuard } from './cloud-turns.ts';
import { activateLicense, deactivateLicense, syncSite, type FlowParts } from './cloud-flows.ts';

/**
 * The app's cloud client, one object for the composition root to wire:
 * the connect flow (connect, activate, deactivate, status, sync,
 * disconnect), `entitlements` (an EntitlementSource for the feature gates),
 * `usage` (the UsageSink outbox), `api` (the typed endpoints, for AI and
 * updates) and the background refresh. It makes no cloud request on its own
 * except the daily refresh and the outbox upload, both background jobs of
 * the service; the caller of every other operation is checked by the
 * caller's layer (REST, CLI, IPC) before it gets here.
 */
export const OUTBOX_FILE = 'cloud-outbox.jsonl';

export class CloudClient {
  readonly entitlements: CloudEntitlements;
  readonly usage: UsageOutbox;
  private identity: SiteIdentity | null = null;
  private readonly certs: CertificateKeeper;
  private apiInstance: CloudApi | null = null;
  private ticker: NodeJS.Timeout | null = null;
  private closed = false;
  private refreshing: Promise<unknown> | null = null;
  private readonly guard = new ChangeGuard();
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;

  private constructor(
    private readonly o: CloudClientOptions,
    private readonly runtime: CloudRuntime,
    private readonly creds: CloudCredentials,
  ) {
    this.clock = o.clock ?? systemClock;
    this.log = o.log ?? createLogger();
    this.random = o.random ?? Math.random;
    this.certs = new CertificateKeeper(runtime, this.clock, this.log, () => this.identity?.site_id ?? null);
    this.entitlements = new CloudEntitlements({
      clock: this.clock,
      certificate: () => (this.connected() && !this.certs.siteRefusal ? this.certs.held : null),
      offsetMs: () => runtime.trustedOffsetMs(),
      highWaterMs: () => runtime.highWaterMs(),
      observeTime: (t) => runtime.observeTime(t),
      local: o.local,
    });
    this.usage = new UsageOutbox({
      file: join(o.dataDir, OUTBOX_FILE),
      clock: this.clock,
      log: this.log,
      siteId: () => (this.connected() && !this.certs.siteRefusal ? this.identity!.site_id : null),
      offsetMs: () => runtime.offsetMs(),
      upload: async (body, key, mode) => {
        try {
          return (await this.requireApi().usageRecord(body, key, { mode })).data;
        } catch (e) {
          throw await this.certs.notice(e);
        }
      },
      onChange: o.onChange,
      ...o.outbox,
    });
  }

  static async open(o: CloudClientOptions): Promise<CloudClient> {
    const log = o.log ?? createLogger();
    const client = new CloudClient(
      o,
      await CloudRuntime.open(o.dataDir, log),
      new CloudCredentials(o.vault, o.dataDir),
    );
    await client.recover();
    return client;
  }

  /** The typed endpoints with this site's identity (AI, updates, usage queries), or null when not connected. */
  get api(): CloudApi | null {
    return this.connected() ? this.apiInstance : null;
  }

  /** The registered site's id while connected (usage events carry it), else null. */
  get siteId(): string | null {
    return this.connected() ? this.identity!.site_id : null;
  }

  connected(): boolean {
    return this.identity !== null && this.runtime.doc().connection?.phase === 'connected';
  }

  /**
   * Registers the site and pins the key. One at a time: a second connect, or
   * a disconnect, while this one runs answers `conflict` (two registrations
   * would leave one site's secret in the vault and another's id in the state;
   * a disconnect undone by the connect finishing after it would leave the
   * credentials behind).
   */
  async connect(i: ConnectInput): Promise<ConnectResult> {
    this.guard.exclusive('connect');
    return this.guard.alone('connect', () => this.connectNow(i));
  }

  private async connectNow(i: ConnectInput): Promise<ConnectResult> {
    const current = this.runtime.doc().connection;
    if (current)
      throw new GatehouseError(
        'conflict',
        `already connected to ${current.gateway_url}: disconnect first (gatehouse cloud disconnect)`,
      );
    const gatewayUrl = normalizeGatewayUrl(i.url, { allowInsecureHttp: this.o.allowInsecureHttp });
    const environment = i.environment ?? 'production';
    const explicit = i.publicKey !== undefined ? parsePublicKey(i.publicKey) : null;
    this.setGateway(gatewayUrl);
    this.runtime.forgetSite(); // a new gateway starts with a clean slate
    this.usage.startOver();
    const api = this.apiInstance!;
    const pin = explicit ?? firstKey((await api.keys()).data);
    const fingerprint = fingerprintOf(pin.x);
    await this.creds.forgetAll(); // nothing of an earlier identity may linger
    await this.runtime.update((d) => {
      d.connection = {
        gateway_url: gatewayUrl,
        environment,
        site_url: this.siteUrl(),
        connected_at: new Date(this.clock.now()).toISOString(),
        pin: { fingerprint, kid: pin.kid, source: explicit ? 'explicit' : 'fetched' },
        phase: 'connecting',
      };
      Object.assign(d, NO_SITE_STATE);
    });
    let reg;
    try {
      reg = (await api.register({ url: this.siteUrl(), environment, ...(i.name ? { name: i.name } : {}) })).data;
    } catch (e) {
      await this.runtime.update((d) => void (d.connection = null));
      throw e;
    }
    // Kill here: the state says connecting and the vault holds nothing; recover() forgets the attempt.
    await this.creds.saveIdentity({ site_id: reg.site_id, key_id: reg.key_id, secret: reg.secret }, pin);
    await this.runtime.update((d) => void (d.connection!.phase = 'connected'));
    this.identity = { site_id: reg.site_id, key_id: reg.key_id, secret: reg.secret };
    this.certs.clear();
    this.certs.load(pin, null, null);
    this.log.info('cloud: connected', {
      site_id: reg.site_id,
      gateway_url: gatewayUrl,
      environment,
      key_fingerprint: fingerprint,
    });
    const first: ConnectResult['first_sync'] = await this.sync('interactive').then(
      (r) =>
        r.certificate === 'accepted'
          ? { ok: true as const }
          : {
              ok: false as const,
              code: 'signature_invalid',
              message: `certificate refused: ${this.certs.refusal}`,
              request_id: r.request_id,
            },
      (e: unknown) => failure(e),
    );
    return {
      site_id: reg.site_id,
      environment,
      gateway_url: gatewayUrl,
      pinned_key: { kid: pin.kid, fingerprint, source: explicit ? 'explicit' : 'fetched' },
      first_sync: first,
    };
  }

  /**
   * Activate, deactivate and sync take their turns, one after the other: two
   * at once would write one's license key and another's license, and the
   * certificate answered first but arriving last would be refused as older
   * than the one held (a replay, to the certificate keeper).
   */
  activate(licenseKey: string): Promise<{ license: LicenseView; request_id: string }> {
    return this.guard.inTurn(() => activateLicense(this.flowParts(), licenseKey));
  }

  deactivate(): Promise<{ license: LicenseView; request_id: string }> {
    return this.guard.inTurn(() => deactivateLicense(this.flowParts()));
  }

  /**
   * Uploads the outbox, then reports to sites/sync and takes the current
   * certificate: the on-demand `gatehouse cloud sync` and the daily refresh.
   * An interactive sync is a person asking: it probes the gateway at once,
   * whatever the breaker says (see breakerProbeNow).
   */
  sync(mode: CallMode = 'interactive'): Promise<SyncResult> {
    return this.guard.inTurn(() => syncSite(this.flowParts(), mode));
  }

  /**
   * Tells the gateway (when it can) and forgets the identity. While a connect
   * runs it answers `conflict` and changes nothing (the connect would write
   * its credentials back after it); an activate, deactivate or sync under way
   * stops without writing (see ChangeGuard in cloud-turns.ts).
   */
  async disconnect(): Promise<DisconnectResult> {
    this.guard.exclusive('disconnect');
    const conn = this.runtime.doc().connection;
    if (!conn) return { site_id: null, remote: { ok: true }, unsent_events: 0 };
    return this.guard.alone('disconnect', () => this.disconnectNow());
  }

  private async disconnectNow(): Promise<DisconnectResult> {
    const siteId = this.identity?.site_id ?? null;
    if (this.identity && !this.certs.siteRefusal) await this.usage.flush('interactive').catch(() => undefined);
    await this.runtime.update((d) => void (d.connection!.phase = 'disconnecting'));
    let remote: DisconnectResult['remote'] = { ok: true };
    if (this.identity && this.apiInstance) {
      remote = await this.apiInstance.siteDisconnect().then(
        () => ({ ok: true as const }),
        (e: unknown) => failure(e),
      );
    }
    const unsent = await this.forgetLocally('the site was disconnected');
    if (!remote.ok)
      this.log.warn(
        'cloud: disconnected locally; the gateway could not be told, so the site key stays valid there until an operator disconnects it',
        { site_id: siteId, code: remote.code, request_id: remote.request_id },
      );
    return { site_id: siteId, remote, unsent_events: unsent };
  }

  /** A release manifest from updates/check or updates/package, verified with the pinned key: an update is offered only when this says ok. */
  openManifest(signed: unknown): Opened<ReleaseManifest> {
    const pin = this.certs.pin;
    if (!pin || !this.connected())
      return { ok: false, reason: 'not connected: there is no pinned gateway key to verify the manifest with' };
    return verifyManifest(signed, pin);
  }

  status(): CloudClientStatus {
    return buildStatus({
      doc: this.runtime.doc(),
      connected: this.connected(),
      siteId: this.identity?.site_id ?? null,
      certificate: this.entitlements.view(),
      outbox: this.usage.view(),
      now: this.clock.now(),
      certRefusal: this.certs.refusal,
      siteRefusal: this.certs.siteRefusal,
    });
  }

  /** Starts the background jobs: the refresh schedule and the outbox's upload interval. */
  start(): void {
    this.stopTimers();
    this.usage.start();
    this.ticker = setInterval(() => void this.tick(), this.o.tickMs ?? 60_000);
    this.ticker.unref();
    void this.tick();
  }

  /** Runs a refresh when it is due (also what the timer calls). */
  async tick(): Promise<void> {
    if (!this.connected() || this.refreshing) return;
    const d = this.runtime.doc();
    const due = d.next_refresh_at ?? 0;
    if (this.clock.now() < due) return;
    this.refreshing = this.sync('background')
      .catch((e: unknown) =>
        this.log.warn('cloud: the background refresh failed; local features keep working', {
          code: (e as GatehouseError).code,
        }),
      )
      .finally(() => {
        this.refreshing = null;
        this.o.onChange?.();
      });
    await this.refreshing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopTimers();
    await this.refreshing;
    await this.usage.close();
    await this.runtime.flush();
  }

  private stopTimers(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    this.usage.stop();
  }

  /** Finishes what a killed process left half done, and loads the verified certificate. */
  private async recover(): Promise<void> {
    const conn = this.runtime.doc().connection;
    const identity = await this.creds.site();
    const pin = await this.creds.pin();
    if (conn?.phase === 'disconnecting' || (conn?.phase === 'connecting' && !(identity && pin))) {
      await this.forgetLocally(
        conn.phase === 'disconnecting' ? 'the site was disconnected' : 'a connect attempt did not finish',
      );
      return;
    }
    if (!conn) {
      if (identity) this.log.warn('cloud: the vault held a site identity without a connection; it was removed');
      if (identity || pin) await this.creds.forgetAll();
      return;
    }
    if (!identity || !pin) {
      this.log.error(
        'cloud: connected in the state file, but the site identity is not in the vault (was the keychain reset?): disconnect and connect again',
      );
      return;
    }
    if (conn.phase === 'connecting') await this.runtime.update((d) => void (d.connection!.phase = 'connected'));
    this.identity = identity;
    this.setGateway(conn.gateway_url);
    this.certs.load(pin, this.runtime.doc().certificate, this.runtime.doc().newest_certificate_issued_at);
  }

  private setGateway(gatewayUrl: string): void {
    const http = new CloudHttp({
      gatewayUrl,
      key: () => (this.identity ? { key_id: this.identity.key_id, secret: this.identity.secret } : null),
      state: this.runtime,
      clock: this.clock,
      log: this.log,
      transport: this.o.transport,
      timeouts: this.o.timeouts,
      random: this.o.random,
      sleep: this.o.sleep,
    });
    this.apiInstance = new CloudApi(http);
  }

  private flowParts(): FlowParts {
    return {
      api: this.requireApi(),
      guard: this.guard,
      creds: this.creds,
      runtime: this.runtime,
      certs: this.certs,
      usage: this.usage,
      log: this.log,
      clock: this.clock,
      random: this.random,
      productsInUse: this.o.productsInUse,
      refreshFailed: () => this.refreshFailed(),
    };
  }

  private requireApi(): CloudApi {
    if (!this.connected() || !this.apiInstance)
      throw new CloudClientError(
        'invalid_site',
        'this service is not connected to a cloud gateway: connect it first (gatehouse cloud connect --url GATEWAY_URL)',
        { requestId: null, httpStatus: null, retryable: false },
      );
    return this.apiInstance;
  }

  private async refreshFailed(): Promise<void> {
    const now = this.clock.now();
    await this.runtime.update((d) => {
      d.refresh_failures += 1;
      const openUntil = d.breaker.open_until ?? 0;
      d.next_refresh_at = Math.max(retryRefreshAt(now, d.refresh_failures, this.random), openUntil);
    });
  }

  /** Forgets the site; its counts stay readable as history (`previous_site`), the current ones start from zero. */
  private async forgetLocally(why: string): Promise<number> {
    const unsent = this.usage.abandonAll(why);
    const o = this.usage.view();
    const conn = this.runtime.doc().connection;
    const previous = conn && {
      site_id: this.identity?.site_id ?? null,
      gateway_url: conn.gateway_url,
      disconnected_at: new Date(this.clock.now()).toISOString(),
      delivered: o.delivered,
      rejected: o.rejected,
      abandoned: o.abandoned,
    };
    this.usage.startOver();
    await this.creds.forgetAll();
    this.runtime.forgetSite();
    await this.runtime.update((d) => {
      Object.assign(d, { connection: null, ...NO_SITE_STATE, previous_site: previous ?? d.previous_site });
    });
    this.identity = null;
    this.apiInstance = null;
    this.certs.clear();
    return unsent;
  }

  private siteUrl(): string {
    return this.o.siteUrl?.() ?? 'http://127.0.0.1/';
  }
}
