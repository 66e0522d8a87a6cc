import { posix } from 'node:path';
import { isSecretName } from '../../lib/redact.ts';
import { SCAN_LIMITS } from '../../lib/secret-scan.ts';

/**
 * The argument values a policy reads (docs/policy.md, "Argument values"):
 * `context.args` holds each top-level string, number or boolean argument as
 * text, `context.arg_lists` each array of them; both are Cedar entities with
 * tags, because a Cedar schema has no map type and argument names differ by
 * tool. What a policy sees is bounded and never a secret:
 * - a value the secret scanner flags is its kind (`secret:github_token`),
 *   never its text, and so is any value under a secret-like name (`password`,
 *   `api_key`: it need not look random to be one, as for people's masking);
 * - an absolute or `~/` path is lexically normalized, so `..` cannot step a
 *   value out of a pattern that its raw text would match
 *   (`/notes/../.ssh/id` is `/.ssh/id`);
 * - past the bounds a value is left out, so a policy written as
 *   `hasTag(n) && getTag(n) like ...` refuses it rather than lets it by;
 *   and when the scanner could not check everything (its own limits), no
 *   value is given at all.
 */
export const ARG_VALUE_LIMITS = { names: 32, chars: 1024, items: 32, total: 16_384 } as const;

export interface ArgValues {
  args: Record<string, string>;
  lists: Record<string, string[]>;
}

/** `path` is a finding path of secret-scan.ts (`$.key...`, `$["key"]...`). */
export interface SecretAt {
  kind: string;
  path: string;
}

export function argValuesOf(args: Record<string, unknown>, secrets: readonly SecretAt[]): ArgValues {
  const out: ArgValues = { args: Object.create(null), lists: Object.create(null) };
  if (secrets.length >= SCAN_LIMITS.findings || secrets.some((s) => s.kind === 'scan_limit')) return out;
  let budget: number = ARG_VALUE_LIMITS.total;
  let names = 0;
  for (const name of Object.keys(args)) {
    if (++names > ARG_VALUE_LIMITS.names) break;
    const v = args[name];
    const named = isSecretName(name) ? NAMED : null;
    if (Array.isArray(v)) {
      if (v.length > ARG_VALUE_LIMITS.items || !v.every(isScalar)) continue;
      const items = v.map((x, i) => named ?? secretUnderItem(name, i, secrets) ?? textOf(x));
      const cost = items.reduce((n, s) => n + s.length, 0);
      if (items.some((s) => s.length > ARG_VALUE_LIMITS.chars) || cost > budget) continue;
      budget -= cost;
      out.lists[name] = items;
    } else if (isScalar(v)) {
      const text = named ?? secretUnder(name, secrets) ?? textOf(v);
      if (text.length > ARG_VALUE_LIMITS.chars || text.length > budget) continue;
      budget -= text.length;
      out.args[name] = text;
    }
  }
  return out;
}

const NAMED = 'secret:secret_named_value';

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

function textOf(v: Scalar): string {
  if (typeof v !== 'string') return String(v);
  if (v.startsWith('/') || v.startsWith('~/')) return posix.normalize(v);
  return v;
}

const prefixOf = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? `$.${name}` : `$[${JSON.stringify(name)}]`);

/** The kind of the first secret found in this argument (anywhere inside it), as `secret:KIND`. */
function secretUnder(name: string, secrets: readonly SecretAt[]): string | null {
  const p = prefixOf(name);
  for (const s of secrets)
    if (s.path === p || s.path.startsWith(`${p}.`) || s.path.startsWith(`${p}[`) || s.path.startsWith(`${p}{`))
      return `secret:${s.kind}`;
  return null;
}

function secretUnderItem(name: string, i: number, secrets: readonly SecretAt[]): string | null {
  const p = `${prefixOf(name)}[${i}]`;
  for (const s of secrets)
    if (s.path === p || s.path.startsWith(`${p}.`) || s.path.startsWith(`${p}[`)) return `secret:${s.kind}`;
  // a finding on the whole argument (its key name says secret) covers every item
  const whole = prefixOf(name);
  for (const s of secrets) if (s.path === whole) return `secret:${s.kind}`;
  return null;
}
