import { CLOUD_WARNING_TITLES } from './cloud-words.ts';

/**
 * Raw codes the service reports, said in words for a person; the console keeps
 * the code beside them as a detail (for a search, a bug report, the docs).
 */

const ERROR_WORDS: Record<string, string> = {
  stale_preview: 'the target changed after the preview was made',
  staged_expired: 'it expired before anyone decided',
  forbidden: 'the user who asked no longer has the permission it needs',
  not_found: 'the tool that staged it is no longer available',
  conflict: 'it conflicts with the current state of the site',
  internal_error: 'Gatehouse hit an internal error',
  storage_unavailable: 'the disk refused to save it (full or failing)',
  outcome_unknown: 'it was sent, but whether it took effect is unknown: check the other side',
  apply_interrupted: 'the service stopped while applying it; whether it took effect is unknown',
  not_applied: 'a person checked: it did not take effect',
};

/** Why a staged write failed, in words; unknown codes stay as they are. */
export const errorWords = (code: string): string => ERROR_WORDS[code] ?? code;

const WARNING_TITLES: Record<string, string> = {
  vault_file: 'Secrets are in a plain file',
  store_corrupt: 'A damaged data file was set aside',
  upstream_set_aside: 'A connected server was set aside',
  upstream_down: 'A connected server is down',
  upstream_sign_in_required: 'A connected server needs you to sign in again',
  outcome_unknown: 'A write needs checking',
  definitions_review: 'Definitions wait for review',
  storage_full: 'The disk is full',
  storage_failing: 'The disk refuses writes',
  ...CLOUD_WARNING_TITLES,
};

export const warningTitle = (code: string): string => WARNING_TITLES[code] ?? 'Warning';

/** The health report's cloud values (`not_connected`, `local`, ...) in words. */
const CLOUD_WORDS: Record<string, string> = {
  not_connected: 'Not connected',
  local: 'Local policy (this computer decides)',
  none: 'None',
  active: 'Active',
  inactive: 'Not active',
  synced: 'In sync',
  valid: 'Valid',
  expired: 'Expired',
  invalid: 'Invalid',
};

export const cloudWords = (value: string): string => CLOUD_WORDS[value] ?? value;

/** The product suite's short codes, explained. */
export const PRODUCT_NAMES: Record<string, string> = {
  aeo: 'AEO: answer engine optimization',
  code: 'Code: developer tools',
  verto: 'Verto: translation',
  mcp: 'MCP gateway (this app)',
  pro: 'Pro features',
};

/** Where the service keeps secrets, for a person. */
export function vaultWords(backend: 'keychain' | 'file'): string {
  return backend === 'keychain'
    ? 'In the OS keychain'
    : 'In a plain file readable only by your user account (no OS keychain was reachable)';
}
