import { isSecretName, redact, REDACTED } from './redact.ts';
import { SECRET_PATTERNS, looksRandom } from './secret-patterns.ts';

/**
 * The secret scanner (docs/secrets.md): finds secret-looking values in any
 * JSON-like value (a tool's arguments, a preview, a result) and masks them.
 * Rules: the well-known shapes of secret-patterns.ts anywhere in a string,
 * a GCP service-account key object, and a high-entropy string under a
 * key-like name (isSecretName). Domain-free, bounded in depth, nodes and
 * characters, never throws on any input; `__proto__` keys are plain keys.
 */

export interface SecretFinding {
  /** which rule: a SECRET_PATTERNS kind, `gcp_service_account_key`, `secret_named_value`, or `scan_limit` (too large or deep to check) */
  kind: string;
  /** where: `$` the value itself, `$.a.b[0]`, `$["odd key"]` */
  path: string;
}

export const SCAN_LIMITS = { depth: 64, nodes: 100_000, chars: 8 * 1024 * 1024, findings: 200 } as const;
/** what replaces a value the scanner could not check (too deep, too large): masking never lets one through */
export const UNCHECKED = '[not checked: too large]';

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const childPath = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : IDENT.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

/** `name: value` / `name=value` / `"name": "value"` in free text, where the value follows a key-like name. */
const NAMED_IN_TEXT = /["']?([A-Za-z][\w-]{1,60})["']?\s*[:=]\s*["']?([^\s"',;&]{8,})/g;

/**
 * The text as the patterns read it: full-width forms folded to ASCII (NFKC: `ｇｈｐ＿` is `ghp_`) and
 * invisible characters dropped (zero-width spaces and joiners, word joiner, BOM, soft hyphen), so a token
 * split or disguised by them is still one.
 */
const INVISIBLE = /[\u00ad\u200b-\u200d\u2060\ufeff]/g;
export function readable(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '');
}

/** A run that may be base64 (or base64url) of something: a token pasted as `Basic <base64>`, say. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;

/** The printable text a base64 run decodes to, or null when it is not text. */
function decoded(run: string): string | null {
  try {
    const bin = atob(run.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, ''));
    // text, not binary: a key's bytes decode to noise, which is not a secret's text
    return /^[\x20-\x7e\t\r\n]+$/.test(bin) ? bin : null;
  } catch {
    return null;
  }
}

/** The pattern kinds found in a text (each once), without looking inside base64. */
function shapeKinds(text: string): string[] {
  const kinds: string[] = [];
  for (const p of SECRET_PATTERNS) {
    p.re.lastIndex = 0;
    if (p.re.test(text)) kinds.push(p.kind);
    p.re.lastIndex = 0;
  }
  return kinds;
}

/** Whether a base64 run of the text decodes to a known secret shape; the runs that do. */
function encodedSecrets(text: string): string[] {
  const runs: string[] = [];
  for (const m of text.matchAll(BASE64_RUN)) {
    const plain = decoded(m[0]);
    if (plain && shapeKinds(plain).some((k) => k !== 'gcp_service_account_key')) runs.push(m[0]);
  }
  return runs;
}

interface Budget {
  nodes: number;
  chars: number;
}

/** The kinds of secret found in one string (each kind once). */
function textKinds(raw: string): string[] {
  // The shortest rule (a key-like name, a separator and 8 characters) needs more than this.
  if (raw.length < 10) return [];
  const text = readable(raw);
  const kinds = shapeKinds(text);
  if (encodedSecrets(text).length) kinds.push('encoded_secret');
  NAMED_IN_TEXT.lastIndex = 0;
  for (const m of text.matchAll(NAMED_IN_TEXT)) {
    if (isSecretName(m[1]!) && looksRandom(m[2]!)) {
      kinds.push('secret_named_value');
      break;
    }
  }
  return kinds;
}

const isGcpKey = (o: Record<string, unknown>): boolean =>
  o.type === 'service_account' && typeof o.private_key === 'string';

/**
 * `{name: "X-Api-Key", value: "..."}` (a header or variable list, as HTTP clients and MCP configs write them):
 * the value is secret when the name is, whatever it looks like. The field that holds it, or null.
 */
const PAIR_NAMES = ['name', 'key', 'header'] as const;
function pairedSecretField(o: Record<string, unknown>): 'value' | null {
  if (typeof o.value !== 'string' && typeof o.value !== 'number') return null;
  return PAIR_NAMES.some((n) => typeof o[n] === 'string' && isSecretName(o[n] as string)) ? 'value' : null;
}
const namedSecret = (key: string, v: unknown): boolean => typeof v === 'string' && isSecretName(key) && looksRandom(v);

/** Every secret-looking value in `value`, with where it is. */
export function scanSecrets(value: unknown): { kind: string; path: string }[] {
  const out: SecretFinding[] = [];
  const budget: Budget = { nodes: SCAN_LIMITS.nodes, chars: SCAN_LIMITS.chars };
  const seen = new WeakSet<object>();
  const add = (kind: string, path: string) => {
    if (out.length < SCAN_LIMITS.findings) out.push({ kind, path });
  };
  const walk = (v: unknown, path: string, depth: number): void => {
    if (--budget.nodes < 0) return void (budget.nodes === -1 && add('scan_limit', path));
    if (typeof v === 'string') {
      budget.chars -= v.length;
      if (budget.chars < 0) return add('scan_limit', path);
      for (const kind of textKinds(v)) add(kind, path);
      return;
    }
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    if (depth >= SCAN_LIMITS.depth) return add('scan_limit', path);
    seen.add(v);
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, childPath(path, i), depth + 1));
      return;
    }
    const o = v as Record<string, unknown>;
    if (isGcpKey(o)) add('gcp_service_account_key', path);
    const paired = pairedSecretField(o);
    for (const [k, x] of Object.entries(o)) {
      const p = childPath(path, k);
      // a token used as a map key is as much a secret as one in a value
      for (const kind of textKinds(k)) add(kind, `${path}{key}`);
      if (namedSecret(k, x) || (k === paired && String(x).length > 0)) add('secret_named_value', p);
      else walk(x, p, depth + 1);
    }
  };
  try {
    walk(value, '$', 0);
  } catch {
    // A getter that throws, a proxy: what cannot be read is reported, never a crash.
    add('scan_limit', '$');
  }
  return out;
}

/** Free text with every secret-looking part masked (`[redacted]`): the scanner's shapes, then the log redactor's rules. */
export function maskSecretText(raw: string): string {
  // Read as the patterns read it; a text that folding changes is shown folded only where it hid a secret.
  const folded = readable(raw);
  // base64 runs are decoded once: in the usual text folding changes nothing and the runs are the same
  const foldedRuns = encodedSecrets(folded);
  const useFolded = folded !== raw && (foldedRuns.length > 0 || shapeKinds(folded).length > 0);
  const runs = useFolded || folded === raw ? foldedRuns : encodedSecrets(raw);
  let out = useFolded ? folded : raw;
  for (const run of runs) out = out.split(run).join(REDACTED);
  const named = out.replace(NAMED_IN_TEXT, (m: string, name: string, value: string) =>
    isSecretName(name) && looksRandom(value) ? m.slice(0, m.length - value.length) + REDACTED : m,
  );
  return redact(named);
}

/**
 * A deep copy of `value` for a person's eyes (previews, the audit, the
 * console): secret-shaped text masked inside every string, and every string
 * or number under a key-like name replaced whole (a password need not look
 * random to be one). Beyond the limits a value is replaced, never passed on
 * unchecked. JSON in, JSON out: `__proto__` stays an own key.
 */
export function maskSecrets<T>(value: T): T {
  const budget: Budget = { nodes: SCAN_LIMITS.nodes, chars: SCAN_LIMITS.chars };
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (--budget.nodes < 0) return UNCHECKED;
    if (typeof v === 'string') {
      budget.chars -= v.length;
      return budget.chars < 0 ? UNCHECKED : maskSecretText(v);
    }
    if (v === null || typeof v !== 'object') return v;
    if (seen.has(v)) return '[circular]';
    if (depth >= SCAN_LIMITS.depth) return UNCHECKED;
    seen.add(v);
    let result: unknown;
    if (Array.isArray(v)) result = v.map((x) => walk(x, depth + 1));
    else {
      const o = v as Record<string, unknown>;
      const paired = pairedSecretField(o);
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(o)) {
        const secret = (isSecretName(k) || k === paired) && (typeof x === 'string' || typeof x === 'number');
        // a key that is itself a secret is masked; two such keys stay apart
        let key = maskSecretText(k);
        for (let n = 2; key !== k && Object.hasOwn(out, key); n++) key = `${maskSecretText(k)} (${n})`;
        Object.defineProperty(out, key, {
          value: secret ? REDACTED : walk(x, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      result = out;
    }
    seen.delete(v);
    return result;
  };
  try {
    return walk(value, 0) as T;
  } catch {
    return UNCHECKED as T;
  }
}
