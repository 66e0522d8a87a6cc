import { CloudActivateInput, CloudConnectInput, CloudUsageInput } from '../../main/contract/index.ts';
import type {
  ApiEvent,
  ApiInput,
  ApiOutput,
  CloudStatusView,
  CloudUsageView,
  ErrorCode,
  OutboxView,
  QuotaAlert,
  UpdatesView,
} from '../../main/contract/index.ts';

/**
 * A stand-in for the service's cloud.* and updates.* actions (the wire
 * engineer's handlers), shaped by main/contract/cloud-actions.ts: it keeps
 * state the way the service does (connect, activate, sync, disconnect change
 * `cloud.status` and emit `health`) and refuses the way the contract says.
 */

export const GOOD_LICENSE = `ghl_${'Q'.repeat(32)}`;
export const FINGERPRINT = 'SHA256:3f9a0c1d7b2e4f5a6c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b';

export function makeOutbox(over: Partial<OutboxView> = {}): OutboxView {
  return {
    depth: 0,
    capacity: 10_000,
    full: false,
    refused_full: 0,
    oldest_at: null,
    delivered: 0,
    accepted: 0,
    duplicate: 0,
    rejected: 0,
    abandoned: 0,
    unconnected: 0,
    invalid: 0,
    cloud_recorded: 0,
    recent_rejections: [],
    last_upload_at: null,
    uploading: false,
    unsaved: 0,
    write_error: null,
    ...over,
  };
}

export function makeCloudStatus(over: Partial<CloudStatusView> = {}): CloudStatusView {
  return {
    health: {
      success: false,
      gateway: {
        connected: false,
        last_sync: null,
        license: 'not_connected',
        entitlements: 'local',
        usage: 'local',
        cloud_token: 'none',
      },
      products: { aeo: 'inactive', code: 'inactive', verto: 'inactive', mcp: 'active', pro: 'inactive' },
    },
    connected: false,
    gateway_url: null,
    environment: null,
    site_id: null,
    pinned_key: null,
    certificate: null,
    license_state: 'none',
    products: {},
    last_sync: null,
    last_refresh_attempt: null,
    next_refresh_at: null,
    outbox: makeOutbox(),
    breaker: { state: 'closed', open_until: null, open_ms: 30_000, trips: 0 },
    clock: { offset_ms: 0, set_back: false },
    last_errors: [],
    warnings: [],
    quota_alerts: [],
    previous_site: null,
    ...over,
  };
}

/** A connected status with an active Pro license, as right after connect + activate + sync. */
export function connectedStatus(now = Date.now(), over: Partial<CloudStatusView> = {}): CloudStatusView {
  const at = (ms: number) => new Date(now + ms).toISOString();
  const products = { aeo: 'active', code: 'active', verto: 'active', mcp: 'active', pro: 'active' };
  return makeCloudStatus({
    connected: true,
    gateway_url: 'http://127.0.0.1:8787/gateway/v1',
    environment: 'production',
    site_id: 'site_01JD5K',
    pinned_key: { kid: 'gw-2026-11', fingerprint: FINGERPRINT },
    certificate: {
      kid: 'gw-2026-11',
      issued_at: at(-3_600_000),
      cert_expires_at: at(7 * 86_400_000 - 3_600_000),
      grants_until: at(7 * 86_400_000 - 3_600_000),
      usable: true,
      reason: 'ok',
      license: { status: 'active', plan: 'pro', key_preview: 'ghl_…QQQQ', expires_at: null },
      update: { channel: 'stable', eligible: true },
      products,
    },
    license_state: 'active',
    products,
    last_sync: at(-3_600_000),
    next_refresh_at: at(23 * 3_600_000),
    health: {
      success: true,
      gateway: {
        connected: true,
        last_sync: at(-3_600_000),
        license: 'active',
        entitlements: 'synced',
        usage: 'synced',
        cloud_token: 'valid',
      },
      products,
    },
    ...over,
  });
}

export function makeCloudUsage(over: Partial<CloudUsageView> = {}): CloudUsageView {
  return {
    connected: false,
    source: 'local',
    fetched_at: null,
    limits: [],
    summary: null,
    history: [],
    local: { since: null, usage: {} },
    outbox: makeOutbox(),
    quota_alerts: [],
    error: null,
    ...over,
  };
}

export function makeUpdates(over: Partial<UpdatesView> = {}): UpdatesView {
  return {
    connected: false,
    current_version: '0.1.0',
    channel: null,
    eligible: null,
    checked_at: null,
    latest_version: null,
    update_available: false,
    release: null,
    refused: null,
    error: null,
    ...over,
  };
}

export function quotaAlert(over: Partial<QuotaAlert> = {}): QuotaAlert {
  return {
    level: 'exceeded',
    scope: 'site',
    subject: 'site_01JD5K',
    metric: 'ai_tokens',
    period: 'month',
    limit: 10_000,
    used: 10_000,
    reset_at: '2026-12-01T00:00:00.000Z',
    source: 'limits',
    seen_at: '2026-11-23T10:00:00.000Z',
    ...over,
  };
}

export interface FakeCloudState {
  status: CloudStatusView;
  usage: CloudUsageView;
  updates: UpdatesView;
}

export const initialCloud = (): FakeCloudState => ({
  status: makeCloudStatus(),
  usage: makeCloudUsage(),
  updates: makeUpdates(),
});

type Refuse = (code: ErrorCode, message: string, details?: Record<string, unknown>) => never;
let requests = 0;
const requestId = () => `req_fake_${++requests}`;

export function cloudHandlers(s: { cloud: FakeCloudState }, emit: (e: ApiEvent) => void, refuse: Refuse) {
  const changed = () => emit({ type: 'health' });
  const connected = () => {
    if (!s.cloud.status.connected)
      refuse('invalid_site', 'this site is not connected to a cloud gateway', { request_id: null });
  };
  return {
    'cloud.status': () => s.cloud.status,
    'cloud.connect': (raw: ApiInput<'cloud.connect'>): ApiOutput<'cloud.connect'> => {
      const input = CloudConnectInput.parse(raw);
      if (s.cloud.status.connected) refuse('conflict', 'already connected to a cloud gateway: disconnect first');
      const source = input.public_key ? 'explicit' : 'fetched';
      const base = connectedStatus();
      s.cloud.status = {
        ...base,
        gateway_url: input.url,
        environment: input.environment,
        certificate: {
          ...base.certificate!,
          license: { status: 'inactive', plan: null, key_preview: null, expires_at: null },
          reason: 'license_not_active',
          usable: false,
        },
      };
      changed();
      return {
        site_id: base.site_id!,
        environment: input.environment,
        gateway_url: input.url,
        pinned_key: { kid: 'gw-2026-11', fingerprint: FINGERPRINT, source },
        first_sync: { ok: true },
      };
    },
    'cloud.activate': (raw: ApiInput<'cloud.activate'>): ApiOutput<'cloud.activate'> => {
      const parsed = CloudActivateInput.safeParse(raw);
      if (!parsed.success) refuse('invalid_value', 'license_key: a license key: ghl_ followed by 32 characters');
      connected();
      if (parsed.data!.license_key !== GOOD_LICENSE)
        refuse('license_invalid', 'the gateway does not know this license key', { request_id: 'req_activate_1' });
      const cert = s.cloud.status.certificate!;
      s.cloud.status.certificate = {
        ...cert,
        reason: 'ok',
        usable: true,
        license: { status: 'active', plan: 'pro', key_preview: 'ghl_…QQQQ', expires_at: null },
      };
      changed();
      return {
        license: {
          status: 'active',
          plan: 'pro',
          key_preview: 'ghl_…QQQQ',
          license_expires_at: null,
          sites_used: 1,
          site_limit: 3,
        },
        request_id: requestId(),
      };
    },
    'cloud.deactivate': (): ApiOutput<'cloud.deactivate'> => {
      connected();
      const cert = s.cloud.status.certificate!;
      s.cloud.status.certificate = {
        ...cert,
        reason: 'license_not_active',
        usable: false,
        license: { ...cert.license, status: 'inactive' },
      };
      changed();
      return {
        license: {
          status: 'active',
          plan: 'pro',
          key_preview: 'ghl_…QQQQ',
          license_expires_at: null,
          sites_used: 0,
          site_limit: 3,
        },
        request_id: requestId(),
      };
    },
    'cloud.sync': (): ApiOutput<'cloud.sync'> => {
      connected();
      const sent = s.cloud.status.outbox.depth;
      s.cloud.status.outbox = {
        ...s.cloud.status.outbox,
        depth: 0,
        delivered: s.cloud.status.outbox.delivered + sent,
        accepted: s.cloud.status.outbox.accepted + sent,
      };
      s.cloud.status.last_sync = new Date().toISOString();
      changed();
      return {
        outbox: { ok: true, sent, remaining: 0, error: null },
        certificate: 'accepted',
        request_id: requestId(),
      };
    },
    'cloud.disconnect': (): ApiOutput<'cloud.disconnect'> => {
      const site = s.cloud.status.site_id;
      const unsent = s.cloud.status.outbox.depth;
      s.cloud.status = makeCloudStatus();
      changed();
      return { site_id: site, remote: { ok: true }, unsent_events: unsent };
    },
    'cloud.usage': (raw: ApiInput<'cloud.usage'>) => {
      CloudUsageInput.parse(raw);
      return s.cloud.usage;
    },
    'updates.status': () => s.cloud.updates,
    'updates.check': () => ({ ...s.cloud.updates, checked_at: new Date().toISOString() }),
  };
}
