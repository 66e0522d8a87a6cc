/** Every endpoint of part 1 under `{gateway_url}/gateway/v1/`, with its method. */
export const CLOUD_BASE_PATH = '/gateway/v1';

export const CLOUD_ENDPOINTS = {
  health: { method: 'GET', path: 'health', signed: false },
  keys: { method: 'GET', path: 'keys', signed: false },
  register: { method: 'POST', path: 'sites/register', signed: false },
  siteStatus: { method: 'GET', path: 'sites/status', signed: true },
  siteSync: { method: 'POST', path: 'sites/sync', signed: true },
  siteDisconnect: { method: 'POST', path: 'sites/disconnect', signed: true },
  licenseActivate: { method: 'POST', path: 'license/activate', signed: true },
  licenseDeactivate: { method: 'POST', path: 'license/deactivate', signed: true },
  licenseStatus: { method: 'GET', path: 'license/status', signed: true },
  licenseRefresh: { method: 'POST', path: 'license/refresh', signed: true },
  products: { method: 'GET', path: 'products', signed: true },
  features: { method: 'GET', path: 'features', signed: true },
  entitlements: { method: 'GET', path: 'entitlements', signed: true },
  entitlementsCheck: { method: 'POST', path: 'entitlements/check', signed: true },
  usageRecord: { method: 'POST', path: 'usage/record', signed: true },
  usageSummary: { method: 'GET', path: 'usage/summary', signed: true },
  usageLimits: { method: 'GET', path: 'usage/limits', signed: true },
  usageHistory: { method: 'GET', path: 'usage/history', signed: true },
} as const satisfies Record<string, { method: 'GET' | 'POST'; path: string; signed: boolean }>;
export type CloudEndpoint = keyof typeof CLOUD_ENDPOINTS;

/** Largest request body the gateway reads (a batch of 100 events fits many times over). */
export const CLOUD_MAX_BODY_BYTES = 256 * 1024;
