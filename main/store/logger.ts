import type { Logger } from '../core/ports.ts';

/**
 * Structured logs, one line per record, to stderr unless told otherwise (the
 * bridge keeps stdout for protocol). Every record passes through redaction:
 * no token, admin key, bearer value or secret-named field reaches the stream,
 * even when a caller passes one by mistake.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const REDACTED = '[redacted]';

const KEY_WORDS = '(?:secret|token|passw(?:or)?d|api[_-]?key|authori[sz]ation|cookie|credential|private[_-]?key)';

// Each rule masks one shape of secret in free text. Tokens are gth_ + 43
// base64url chars (DESIGN.md section 3); admin keys are gha_ + base64url.
const RULES: Array<{ re: RegExp; mask: (m: string, ...g: string[]) => string }> = [
  { re: /gth_[A-Za-z0-9_-]{43}[A-Za-z0-9_-]*/g, mask: () => REDACTED },
  { re: /gha_[A-Za-z0-9_-]{16,}/g, mask: () => REDACTED },
  // "Bearer <credential>"; 8+ chars so prose like "bearer tokens" stays readable.
  { re: /\b([Bb]earer)\s+[A-Za-z0-9._~+/=-]{8,}/g, mask: (_m, scheme) => `${scheme} ${REDACTED}` },
  // A dumped header line: "Cookie: a=b; c=d".
  { re: /^(\s*(?:authorization|proxy-authorization|cookie|set-cookie|x-api-key)\s*:\s*).+$/gim, mask: (_m, head) => `${head}${REDACTED}` },
  // key=value in URLs, forms and our own text log lines.
  {
    re: new RegExp(`\\b([\\w-]*${KEY_WORDS}[\\w-]*)=([^\\s&"',;]+)`, 'gi'),
    mask: (m, key, value) => (isSafeKey(key) || value === REDACTED ? m : `${key}=${REDACTED}`),
  },
  // "key": "value" in dumped JSON.
  {
    re: new RegExp(`"([\\w-]*${KEY_WORDS}[\\w-]*)"(\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi'),
    mask: (m, key, sep) => (isSafeKey(key) || m.endsWith(`"${REDACTED}"`) ? m : `"${key}"${sep}"${REDACTED}"`),
  },
];

/** Masks anything that looks like a secret in free text. */
export function redact(text: string): string {
  let out = text;
  for (const { re, mask } of RULES) out = out.replace(re, mask as (m: string, ...g: unknown[]) => string);
  return out;
}

const SENSITIVE_KEY = new RegExp(KEY_WORDS, 'i');
// Ids, previews and counts of secrets are what we log instead of the secrets.
const SAFE_KEY = /(^|_|-)(id|ids|preview|label|count|expires_at|created|last_used)$|^tokens_(input|output)$/i;

function isSafeKey(key: string): boolean {
  return SAFE_KEY.test(key);
}

function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY.test(key) && !isSafeKey(key);
}

/** Deep copy of log fields with secret-named fields masked and all strings redacted. */
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
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // Numbers and booleans under a secret-like name (tokens_used, has_password) carry no secret.
    out[k] = isSensitiveKey(k) && v !== null && (typeof v === 'string' || typeof v === 'object') ? REDACTED : redactFields(v, depth + 1, seen);
  }
  return out;
}

export interface LoggerOptions {
  level?: LogLevel;
  stream?: NodeJS.WritableStream;
  /** one JSON object per line instead of `time LEVEL message key=value` */
  json?: boolean;
  /** fields added to every record (e.g. {component: 'bridge'}) */
  bindings?: Record<string, unknown>;
}

export type GatehouseLogger = Logger & { child(bindings: Record<string, unknown>): GatehouseLogger; readonly level: LogLevel };

export function createLogger(opts: LoggerOptions = {}): GatehouseLogger {
  const level = opts.level ?? 'info';
  const stream = opts.stream ?? process.stderr;
  const threshold = LEVELS[level];
  const bindings = opts.bindings ?? {};

  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (LEVELS[lvl] < threshold) return;
    const at = new Date().toISOString();
    const safeMsg = redact(String(msg));
    const safeFields = redactFields({ ...bindings, ...fields }) as Record<string, unknown>;
    let line: string;
    if (opts.json) {
      line = JSON.stringify({ at, level: lvl, msg: safeMsg, ...safeFields });
    } else {
      const pairs = Object.entries(safeFields).map(([k, v]) => `${k}=${formatValue(v)}`);
      line = [at, lvl.toUpperCase().padEnd(5), oneLine(safeMsg), ...pairs].join(' ');
    }
    try {
      stream.write(`${line}\n`);
    } catch {
      // A closed stderr must not take the service down.
    }
  };

  return {
    level,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (more) => createLogger({ ...opts, bindings: { ...bindings, ...more } }),
  };
}

function oneLine(s: string): string {
  return s.replace(/\r?\n/g, '\\n');
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v === undefined) return 'undefined';
  return JSON.stringify(v) ?? String(v);
}

/** For code paths that must log somewhere but were given no logger. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
