import type { IncomingHttpHeaders } from 'node:http';
import { REDACTED, redact } from '../../../main/lib/redact.ts';
import type { TransportError } from './http-post.ts';

/**
 * The one result every adapter answers with. A failure says what kind it
 * was, whether the same provider may be tried again, and a reason a person
 * can act on; usage is always there (what the provider reported, or what we
 * estimated), so a partial stream can still be settled against a quota.
 */

export type FailureKind =
  | 'rate_limited' // 429
  | 'server_error' // 5xx, 529 overloaded, an error event in the stream
  | 'timeout' // connect or overall deadline
  | 'network' // refused, reset, DNS
  | 'disconnected' // the stream ended before its last event
  | 'malformed' // an answer we cannot read
  | 'auth' // 401/403: our key is wrong or lacks access
  | 'not_found' // 404: the model or the endpoint does not exist there
  | 'not_configured' // the key's environment variable is not set
  | 'bad_request' // 400/413/422: the request itself was refused
  | 'aborted'; // the caller cancelled

export interface ProviderFailure {
  kind: FailureKind;
  /** the same provider may succeed if asked again later */
  retryable: boolean;
  /** for people and logs; never contains the provider key */
  reason: string;
  status?: number;
  /** seconds, from the provider's Retry-After */
  retry_after_s?: number;
}

export interface Usage {
  tokens_input: number;
  tokens_output: number;
  /** true when the provider did not report usage and we counted characters instead */
  estimated: boolean;
}

export type ProviderOutcome =
  /** overran: the provider streamed past max_tokens and we stopped reading (its text is cut there) */
  | ({ ok: true; text: string; model: string; overran?: boolean } & Usage)
  | ({ ok: false; failure: ProviderFailure } & Usage);

const RETRYABLE: Record<FailureKind, boolean> = {
  rate_limited: true,
  server_error: true,
  timeout: true,
  network: true,
  disconnected: true,
  malformed: true,
  auth: false,
  not_found: false,
  not_configured: false,
  bad_request: false,
  aborted: false,
};

/**
 * Whether the next provider should be tried after this failure: yes when the
 * fault is the provider's or our configuration of it, no when the request
 * itself was refused (every provider would refuse it and spend quota doing
 * so) or the caller went away.
 */
export function failsOver(kind: FailureKind): boolean {
  return kind !== 'bad_request' && kind !== 'aborted';
}

/** Whether this failure counts towards the provider's circuit breaker. */
export function countsAgainstProvider(kind: FailureKind): boolean {
  return failsOver(kind);
}

export function failure(
  kind: FailureKind,
  reason: string,
  extra: { status?: number; retry_after_s?: number } = {},
): ProviderFailure {
  return { kind, retryable: RETRYABLE[kind], reason, ...extra };
}

export function failed(
  f: ProviderFailure,
  usage: Usage = { tokens_input: 0, tokens_output: 0, estimated: false },
): ProviderOutcome {
  return { ok: false, failure: f, ...usage };
}

export function fromTransport(e: TransportError): ProviderFailure {
  switch (e.failure) {
    case 'connect_timeout':
    case 'timeout':
      return failure('timeout', e.message);
    case 'network':
      return failure('network', e.message);
    case 'disconnected':
      return failure('disconnected', e.message);
    case 'too_large':
      return failure('malformed', e.message);
    case 'aborted':
      return failure('aborted', e.message);
  }
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), capped at an hour. */
export function retryAfterSeconds(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const raw = headers['retry-after'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (!v) return undefined;
  const secs = /^\d{1,7}$/.test(v.trim()) ? Number(v.trim()) : Math.ceil((Date.parse(v) - now) / 1000);
  if (!Number.isFinite(secs)) return undefined;
  return Math.min(3600, Math.max(0, secs));
}

/** An HTTP error answer from a provider, mapped by status; `detail` is the provider's own message, already made safe. */
export function fromStatus(status: number, headers: IncomingHttpHeaders, detail: string): ProviderFailure {
  const said = detail ? `: ${detail}` : '';
  const extra = {
    status,
    ...(retryAfterSeconds(headers) !== undefined ? { retry_after_s: retryAfterSeconds(headers) } : {}),
  };
  if (status === 429) return failure('rate_limited', `the provider is rate limiting us (HTTP 429)${said}`, extra);
  if (status === 408) return failure('timeout', `the provider timed out (HTTP 408)${said}`, extra);
  if (status >= 500) return failure('server_error', `the provider failed (HTTP ${status})${said}`, extra);
  if (status === 401 || status === 403)
    return failure('auth', `the provider refused our key (HTTP ${status})${said}`, extra);
  if (status === 404)
    return failure('not_found', `the provider does not have this model or endpoint (HTTP 404)${said}`, extra);
  if (status >= 400) return failure('bad_request', `the provider refused the request (HTTP ${status})${said}`, extra);
  return failure('malformed', `unexpected HTTP ${status} from the provider${said}`, extra);
}

/**
 * A provider's own error text, fit to repeat: one line, at most `max`
 * characters, through the one log redactor (bearer values, key=value,
 * secret-named JSON fields), and with anything that shares six characters in
 * a row with the key masked (providers echo a partly masked key back on a 401).
 */
export function safeDetail(text: unknown, key: string | undefined, max = 200): string {
  if (typeof text !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  const flat = redact(text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim());
  const words = flat.split(/\s+/).map((w) => (key && sharesRun(w, key, 6) ? REDACTED : w));
  const out = words.join(' ');
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

function sharesRun(word: string, key: string, run: number): boolean {
  if (word.length < run || key.length < run) return false;
  for (let i = 0; i + run <= key.length; i++) if (word.includes(key.slice(i, i + run))) return true;
  return false;
}

/** Roughly four characters per token: only used when a provider reports no usage. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
