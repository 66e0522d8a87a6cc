import { isSecretName, REDACTED } from '../../lib/redact.ts';

/**
 * An env value that is plainly a setting, not a credential, under a name that does not say secret: a path
 * (`/home/me/notes`), a word or list of words (`production`, `repos,issues`), a number (`8080`). Masking
 * those would blank ordinary words and folders out of every answer of that server. Anything else an env
 * value holds (digits and letters mixed, symbols, a URL) is masked, and so is every value under a name
 * like `API_KEY` or `DB_PASSWORD`, whatever it looks like; header values and tokens always are.
 */
export function isPlainSetting(name: string, value: string): boolean {
  if (isSecretName(name)) return false;
  if (/^~?\/[^\s:@?#]*$/.test(value)) return true;
  return /^[A-Za-z_.,:-]{1,32}$/.test(value) || /^\d{1,6}$/.test(value);
}

/**
 * The values an upstream was given (its env and header values, its bearer
 * token, an OAuth upstream's current tokens) masked in whatever it answers:
 * a server that echoes its configuration, or the Authorization header it
 * received, must not hand the credential to the agent (who could then reach
 * the remote with no approval and no audit). Exact values, not shapes: the
 * upstream's answer is otherwise passed on as it is (docs/secrets.md).
 *
 * A value is also found in the forms an answer commonly carries it in: JSON-
 * escaped, percent-encoded, base64 and base64url, and for a header value
 * `Bearer x` / `Basic x` the credential `x` alone (and a Basic password).
 */

/** Shorter values would mask ordinary words (the same bound as the log redactor's `Redactor`). */
export const MIN_KNOWN = 4;
/** In a base64 field a raw value this short could occur by chance in the encoding itself: only its decoded bytes are checked. */
const MIN_RAW_IN_BASE64 = 12;
/** Deeper than this a part is checked as its JSON text (whole), not walked. */
const MAX_DEPTH = 64;
/** Fields that hold base64 in MCP answers: an image or audio block's `data`, a resource's `blob`. */
const BASE64_FIELDS = new Set(['data', 'blob']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SCHEME = /^(bearer|basic|token|apikey)\s+(\S+)$/i;

const base64 = (s: string) => Buffer.from(s, 'utf8').toString('base64').replace(/=+$/, '');
const base64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/** The credentials inside one configured value: itself, a header's credential after its scheme, a Basic password. */
function parts(value: string): string[] {
  const out = [value];
  const m = SCHEME.exec(value.trim());
  if (m) {
    out.push(m[2]!);
    if (m[1]!.toLowerCase() === 'basic') {
      const plain = Buffer.from(m[2]!, 'base64').toString('utf8');
      const colon = plain.indexOf(':');
      if (colon > 0) out.push(plain, plain.slice(colon + 1));
    }
  }
  return out.filter((v) => v.length >= MIN_KNOWN);
}

/** The forms of one credential an answer may carry as text: as it is, JSON-escaped, percent-encoded. */
function plainFormsOf(v: string): string[] {
  let uri = v;
  try {
    uri = encodeURIComponent(v);
  } catch {
    // a lone surrogate: no percent-encoded form
  }
  return [v, JSON.stringify(v).slice(1, -1), uri];
}

interface Forms {
  key: string;
  /** every form, longest first (a longer one is never left in pieces by a shorter one masked first) */
  text: string[];
  /** the plain forms (not base64) long enough to check in a base64 field as they are */
  plainInBase64: string[];
  /** the credentials' bytes, as latin1 strings, for decoded base64 fields */
  bytes: string[];
}

export class KnownValues {
  private forms: Forms = { key: '', text: [], plainInBase64: [], bytes: [] };

  /** `values` is asked at every use: an OAuth token refreshed a moment ago is among them. */
  constructor(private readonly values: () => readonly string[]) {}

  private current(): Forms {
    const values = this.values().filter((v) => typeof v === 'string' && v.length >= MIN_KNOWN);
    const key = values.join('\u0000');
    if (key === this.forms.key) return this.forms;
    const creds = [...new Set(values.flatMap(parts))];
    const longestFirst = (a: string, b: string) => b.length - a.length;
    const plain = [...new Set(creds.flatMap(plainFormsOf))].sort(longestFirst);
    const text = [...new Set([...plain, ...creds.flatMap((c) => [base64(c), base64url(c)])])]
      .filter((f) => f.length >= MIN_KNOWN)
      .sort(longestFirst);
    const plainInBase64 = plain.filter((f) => f.length >= MIN_RAW_IN_BASE64);
    const bytes = creds.map((c) => Buffer.from(c, 'utf8').toString('latin1')).sort(longestFirst);
    this.forms = { key, text, plainInBase64, bytes };
    return this.forms;
  }

  /** Whether there is anything to mask at all (nothing configured: answers pass untouched, uncopied). */
  get empty(): boolean {
    return this.current().text.length === 0;
  }

  /** One text with every known value masked. */
  text(s: string): string {
    return replaceAll(s, this.current().text);
  }

  /**
   * A deep copy of an answer with every known value masked in every string and
   * key; the same object when nothing was found (a large result is not copied
   * for nothing). Base64 fields are checked decoded, and re-encoded masked.
   */
  value<T>(v: T): T {
    const forms = this.current();
    if (!forms.text.length) return v;
    // a part met twice is masked the same; a cycle (never in JSON) is left at its second visit
    const done = new Map<object, unknown>();
    const walk = (x: unknown, key: string | null, depth: number): unknown => {
      if (typeof x === 'string')
        return key !== null && BASE64_FIELDS.has(key) ? maskBase64(x, forms) : replaceAll(x, forms.text);
      if (x === null || typeof x !== 'object') return x;
      if (done.has(x)) return done.get(x);
      if (depth > MAX_DEPTH) return deepPart(x, forms.text);
      done.set(x, x);
      const r = walkObject(x, depth);
      done.set(x, r);
      return r;
    };
    const walkObject = (x: object, depth: number): unknown => {
      if (Array.isArray(x)) {
        let changed = false;
        const out = x.map((e) => {
          const m = walk(e, null, depth + 1);
          changed ||= m !== e;
          return m;
        });
        return changed ? out : x;
      }
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [k, e] of Object.entries(x as Record<string, unknown>)) {
        const mk = replaceAll(k, forms.text);
        const m = walk(e, k, depth + 1);
        changed ||= mk !== k || m !== e;
        // `__proto__` stays an own key, as it came
        Object.defineProperty(out, mk, { value: m, enumerable: true, writable: true, configurable: true });
      }
      return changed ? out : x;
    };
    return walk(v, null, 0) as T;
  }
}

/** A part nested too deep to walk: kept when its JSON text holds no known value, else replaced whole (and when it cannot be read). */
function deepPart(x: object, forms: readonly string[]): unknown {
  try {
    const json = JSON.stringify(x);
    return forms.some((f) => json.includes(f)) ? REDACTED : x;
  } catch {
    return REDACTED;
  }
}

function replaceAll(s: string, forms: readonly string[]): string {
  let out = s;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
  return out;
}

/**
 * A base64 field: the bytes it encodes masked, and encoded again (at any alignment: the encoded forms of a value
 * are not looked for in it). A long value written into it as it is, masked too (that breaks the encoding, which
 * only a server smuggling it there would have made).
 */
function maskBase64(s: string, forms: Forms): string {
  if (s.length < 4 || s.length % 4 !== 0 || !BASE64.test(s)) return replaceAll(s, forms.text);
  const bytes = Buffer.from(s, 'base64').toString('latin1');
  const masked = replaceAll(bytes, forms.bytes);
  return replaceAll(masked === bytes ? s : Buffer.from(masked, 'latin1').toString('base64'), forms.plainInBase64);
}
