import { isSecretName } from './redact.ts';

/**
 * Secret-looking values in a JSON value: which kind, and where (a dotted
 * path). A minimal version of the scanner (the policy's `secret_kinds`
 * needs only this signature): the shapes redact.ts masks in logs, plus
 * private keys and cloud keys. Never returns the value itself.
 */
export interface SecretFinding {
  kind: string;
  path: string;
}

const SHAPES: ReadonlyArray<{ kind: string; re: RegExp }> = [
  { kind: 'private_key', re: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/ },
  { kind: 'aws_access_key', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: 'github_token', re: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/ },
  { kind: 'gatehouse_token', re: /\b(?:gth|gha)_[A-Za-z0-9_-]{20,}/ },
  { kind: 'bearer', re: /\bbearer\s+[A-Za-z0-9._~+/=-]{16,}/i },
];

const MAX_DEPTH = 32;
const MAX_FINDINGS = 100;

export function scanSecrets(value: unknown): SecretFinding[] {
  const found: SecretFinding[] = [];
  const walk = (v: unknown, path: string, name: string, depth: number): void => {
    if (found.length >= MAX_FINDINGS || depth > MAX_DEPTH) return;
    if (typeof v === 'string') {
      for (const { kind, re } of SHAPES) if (re.test(v)) found.push({ kind, path });
      // A value under a secret-like name (api_key, password) that is long enough to be one.
      if (name && isSecretName(name) && v.length >= 8 && !found.some((f) => f.path === path)) found.push({ kind: 'secret_field', path });
      return;
    }
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}[${i}]`, name, depth + 1));
    for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k, k, depth + 1);
  };
  walk(value, '', '', 0);
  return found;
}
