/**
 * The cloud client's codes said in words (the Cloud screen, the Usage
 * screen's quotas, the Overview's cloud card). The code stays beside the
 * words as a detail, so a person can quote it and search the docs.
 */

const CLOUD_ERROR_WORDS: Record<string, string> = {
  gateway_unavailable: 'The cloud gateway could not be reached',
  invalid_site: 'This Gatehouse is not registered with the cloud gateway (connect it first, or again)',
  license_invalid: 'The license key is not valid',
  license_expired: 'The license has expired',
  entitlement_required: 'The plan does not include this feature',
  quota_exceeded: 'A usage quota is used up',
  signature_invalid: 'A signature did not verify: check the pinned gateway key',
  token_expired: 'The request was too old when it arrived: check this computer’s clock',
  product_inactive: 'This product is switched off for this site',
  provider_unavailable: 'The AI provider is not available',
  update_not_allowed: 'Updates on this channel are not included in the license',
  rate_limited: 'The cloud gateway asked to slow down',
  site_limit_reached: 'Every seat of this license is already in use',
  conflict: 'This Gatehouse is already connected (disconnect first to connect elsewhere)',
  invalid_value: 'A value was not accepted',
  service_unavailable: 'The Gatehouse service cannot do this right now',
};

/** A cloud failure in words; unknown codes keep the service's own message. */
export const cloudErrorWords = (code: string, message: string): string => CLOUD_ERROR_WORDS[code] ?? message;

const CERT_REASON_WORDS: Record<string, string> = {
  ok: 'Valid',
  stale: 'Valid, but not refreshed for over 72 hours: sync now',
  expired: 'Expired: features fall back to the free local policy until a sync succeeds',
  clock_set_back: 'Paused: this computer’s clock was set back',
  license_not_active: 'The license is not active: the free local policy applies',
};
export const certificateWords = (reason: string): string => CERT_REASON_WORDS[reason] ?? reason;

const BREAKER_WORDS: Record<string, string> = {
  closed: 'Normal: requests go through',
  open: 'Paused after repeated failures',
  half_open: 'Trying again with one request',
};
export const breakerWords = (state: string): string => BREAKER_WORDS[state] ?? state;

const LICENSE_WORDS: Record<string, string> = {
  active: 'Active',
  inactive: 'Not active',
  expired: 'Expired',
  invalid: 'Not valid (revoked or unknown)',
};
export const licenseWords = (status: string): string => LICENSE_WORDS[status] ?? status;

export {
  metricName as metricWords,
  periodName as periodWords,
  scopeName as scopeWords,
} from '../../main/contract/index.ts';

export const CLOUD_WARNING_TITLES: Record<string, string> = {
  cloud_gateway_unreachable: 'The cloud gateway cannot be reached',
  cloud_certificate_stale: 'The cloud certificate is getting old',
  cloud_certificate_expired: 'The cloud certificate has expired',
  cloud_certificate_missing: 'No cloud certificate yet',
  cloud_certificate_refused: 'The cloud certificate was refused',
  cloud_license_inactive: 'The license is not active',
  cloud_site_refused: 'The cloud gateway no longer accepts this site',
  cloud_outbox_full: 'The usage outbox is full',
  cloud_sync_failed: 'The last cloud sync failed',
  cloud_quota_exceeded: 'A cloud quota is used up',
  cloud_quota_near: 'A cloud quota is nearly used up',
  cloud_clock_set_back: 'This computer’s clock was set back',
};
