/**
 * The one log redactor, for the service logger, the bridge's log and the
 * cloud service: no token, admin key, bearer value, cookie or secret-named
 * field reaches a log line, even when a caller passes one by mistake or a
 * server echoes one back. Dependency-free (the bridge bundles it).
 */

import { SECRET_PATTERNS } from './secret-patterns.ts';

export const REDACTED = '[redacted]';

/** Words that make a field name secret: `license_key`, `apiKey`, `x-api-key`, `client_secret`, `Set-Cookie`, ... */
const SECRET_WORDS = new Set([
  'authorization',
  'auth',
  'token',
  'tokens',
  'secret',
  'secrets',
  'password',
  'passwd',
  'passphrase',
  'key',
  'apikey',
  'cookie',
  'cookies',
  'credential',
  'credentials',
  'signature',
  // short forms a field name often uses: a password, a PIN, a one-time code, a connection string with its password
  'pwd',
  'pin',
  'otp',
  'dsn',
  'passcode',
]);
/** Names of what we log instead of secrets: ids, previews, counts, times, public keys and fingerprints (a hash a person compares). */
const SAFE_NAME =
  /(^|_)(id|ids|preview|label|count|expires_at|created|last_used|kid|keyid|key_id|public_key|idempotency_key|fingerprint)$|^tokens_(input|output)$|^keys$/;

/** True for a field name whose value must not be logged. */
export function isSecretName(name: string): boolean {
  // snake_case, kebab-case and camelCase -> lower-case words joined by '_'
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_');
  if (SAFE_NAME.test(snake)) return false;
  return snake.split('_').some((w) => SECRET_WORDS.has(w));
}

type Rule = { re: RegExp; mask: (m: string, ...g: string[]) => string };

const RULES: Rule[] = [
  // Well-known secret shapes (secret-patterns.ts): private keys, cloud keys, common token formats, JWTs, and ours (gth_, gha_, any gh?_).
  ...SECRET_PATTERNS.filter((p) => !p.marker).map((p): Rule => ({ re: p.re, mask: p.mask ?? (() => REDACTED) })),
  // A header dump: "Authorization: Bearer x", "Cookie: a=b; c=d" — the rest of the line.
  {
    re: /\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key)(\s*:\s*)[^\r\n]+/gi,
    mask: (_m, name, sep) => `${name}${sep}${REDACTED}`,
  },
  // "Bearer <credential>" / "Basic <credential>"; a short all-letter word is prose ("bearer tokens").
  {
    re: /\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{6,})/gi,
    mask: (m, scheme, sp, cred) => (/^[A-Za-z]{1,15}$/.test(cred) ? m : `${scheme}${sp}${REDACTED}`),
  },
  // name=value in URLs, forms and text log lines.
  {
    re: /([\w-]+)=([^\s&"',;]+)/g,
    mask: (m, name, value) => (value === REDACTED || !isSecretName(name) ? m : `${name}=${REDACTED}`),
  },
  // "name": "value" in dumped JSON.
  {
    re: /"([\w-]+)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g,
    mask: (m, name, sep) => (!isSecretName(name) || m.endsWith(`"${REDACTED}"`) ? m : `"${name}"${sep}"${REDACTED}"`),
  },
];

/** Masks anything shaped like a secret in free text. */
export function redact(text: string): string {
  let out = text;
  for (const { re, mask } of RULES) out = out.replace(re, mask as (m: string, ...g: unknown[]) => string);
  return out;
}

/** Deep copy of log fields: secret-named fields masked, every string redacted, bounded depth and width. */
export function redactFields(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') {
    return typeof value === 'bigint' ? value.toString() : typeof value === 'function' ? '[function]' : value;
  }
  if (seen.has(value)) return '[circular]';
  if (depth > 6) return '[nested]';
  seen.add(value);
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: redact(value.message), ...(code !== undefined ? { code: String(code) } : {}) };
  }
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => redactFields(v, depth + 1, seen));
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value)) {
    // Numbers and booleans under a secret-like name (tokens_used, has_password) carry no secret.
    out[k] =
      isSecretName(k) && v !== null && (typeof v === 'string' || typeof v === 'object')
        ? REDACTED
        : redactFields(v, depth + 1, seen);
  }
  return out;
}

/**
 * redact() plus the exact values a process was given (a token from the
 * environment, a header value): those are masked wherever they appear, even
 * when they have no recognisable shape.
 */
export class Redactor {
  private readonly secrets = new Set<string>();

  /** Registers a value that must never appear in a log line or an error message. */
  add(secret: string): void {
    // Very short values would mask ordinary words; credentials are never that short.
    if (secret.length >= 4) this.secrets.add(secret);
  }

  apply(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return redact(out);
  }
}
