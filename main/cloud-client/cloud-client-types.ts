import type { CloudProduct } from '../contract/cloud/catalog.ts';
import type { LicenseView } from '../contract/cloud/license.ts';
import type { CloudFailure } from '../contract/cloud-actions.ts';
import type { Environment } from '../contract/cloud/sites.ts';
import { GatehouseError } from '../core/errors.ts';
import type { EntitlementSource, Vault } from '../core/ports/ports.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Timeouts } from './cloud-http.ts';
import { isCloudClientError } from './errors.ts';
import type { Transport } from './transport.ts';
import type { FlushResult } from './usage-outbox.ts';

/** The options and answers of CloudClient's operations (what phase B's CLI, REST and IPC pass on). */
export interface CloudClientOptions {
  dataDir: string;
  vault: Vault;
  clock?: Clock;
  log?: Logger;
  transport?: Transport;
  timeouts?: Partial<Timeouts>;
  /** the site address registered with the gateway (the local service's base URL) */
  siteUrl?: () => string;
  /** the products this install uses, reported by sites/sync */
  productsInUse?: () => CloudProduct[];
  /** the policy while unconnected (default: the local free plan) */
  local?: EntitlementSource;
  outbox?: { capacity?: number; batchSize?: number; intervalMs?: number };
  /** how often the refresh schedule is looked at (default 1 min) */
  tickMs?: number;
  /** allow http:// to a non-loopback gateway (tests of a remote-looking host; never in production) */
  allowInsecureHttp?: boolean;
  /** the client's state changed on its own (background refresh or upload): the service tells the console */
  onChange?: () => void;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface ConnectInput {
  url: string;
  environment?: Environment;
  /** the gateway's public key to pin (JWK JSON, bare x, or kid:x); default: the first key of GET keys */
  publicKey?: string;
  name?: string;
}

export interface ConnectResult {
  site_id: string;
  environment: Environment;
  gateway_url: string;
  pinned_key: { kid: string | null; fingerprint: string; source: 'explicit' | 'fetched' };
  /** the first sync's outcome: the connection stands even when it failed */
  first_sync: { ok: true } | { ok: false; code: string; message: string; request_id: string | null };
}

export interface SyncResult {
  outbox: FlushResult;
  certificate: 'accepted' | 'refused';
  request_id: string;
}

export interface DisconnectResult {
  site_id: string | null;
  remote: { ok: true } | { ok: false; code: string; message: string; request_id: string | null };
  /** usage events that could not be uploaded before the identity was dropped */
  unsent_events: number;
}

export type Failure = { ok: false; code: string; message: string; request_id: string | null };

/** A failed operation as data, for answers that report a part that failed (first sync, remote disconnect). */
export function failure(e: unknown): Failure {
  if (isCloudClientError(e)) return { ok: false, code: e.cloudCode, message: e.message, request_id: e.requestId };
  if (e instanceof GatehouseError) return { ok: false, code: e.code, message: e.message, request_id: null };
  return { ok: false, code: 'internal_error', message: 'internal error: see the service log', request_id: null };
}

/** A failure as the cloud actions' answers carry it (CloudFailure: no `ok`). */
export function asFailure(e: unknown): CloudFailure {
  const { code, message, request_id } = failure(e);
  return { code, message, request_id };
}

/** The license fields of sites/sync's site info, as a LicenseView. */
export function licenseFromSite(l: {
  status: string;
  plan: string | null;
  key_preview: string | null;
  expires_at: string | null;
}): Partial<LicenseView> {
  return {
    status: l.status as LicenseView['status'],
    plan: l.plan,
    key_preview: l.key_preview,
    license_expires_at: l.expires_at,
  };
}
