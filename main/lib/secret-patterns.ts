/**
 * The shapes of well-known secrets, one table for the log redactor
 * (redact.ts) and the secret scanner (secret-scan.ts). Each pattern is
 * anchored on a fixed prefix or delimiter so a scan stays linear in the
 * text. docs/secrets.md lists them with the samples that test them.
 */
export interface SecretPattern {
  kind: string;
  /** global; no capture group is needed: the whole match is the secret */
  re: RegExp;
  /** a marker that says a secret is near (found, never masked: the secret itself has its own pattern) */
  marker?: true;
  /** what a match is masked as, when not the whole of it (keep the scheme and user of a URL, say) */
  mask?: (match: string) => string;
}

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // A PEM private key, header to footer (or to the end of a cut-off text): RSA, EC, OPENSSH, ENCRYPTED, PKCS#8.
  {
    kind: 'private_key',
    // Spaces counted loosely (`BEGIN RSA  PRIVATE KEY` still is one).
    re: /-----BEGIN +(?:[A-Z0-9]+ +){0,3}PRIVATE +KEY(?: +BLOCK)? *-----[\s\S]*?(?:-----END +(?:[A-Z0-9]+ +){0,3}PRIVATE +KEY(?: +BLOCK)? *-----|$)/g,
  },
  // A password in a URL's userinfo (`postgres://app:pw@db/x`, `https://user:pw@host`): the password alone is masked.
  {
    kind: 'url_password',
    re: /\b[a-z][a-z0-9+.-]{1,30}:\/\/[^\s/?#@:]{0,256}:[^\s/?#@]{1,256}@/gi,
    mask: (m) => `${m.slice(0, m.indexOf(':', m.indexOf('//') + 2) + 1)}[redacted]@`,
  },
  { kind: 'aws_access_key_id', re: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  // The 40-character secret only next to its name: alone it is any base64 string.
  {
    kind: 'aws_secret_access_key',
    re: /\baws_?secret(?:_?access)?_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi,
  },
  // A service-account key file pasted as text: its private key is found as private_key too.
  { kind: 'gcp_service_account_key', re: /"type"\s*:\s*"service_account"/g, marker: true },
  { kind: 'github_token', re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g },
  { kind: 'gitlab_token', re: /\b(?:glpat|gldt|glrt|glptt|gloas|glft|glsoat)-[A-Za-z0-9_-]{20,}/g },
  {
    kind: 'slack_token',
    re: /\bxox[abposre]-[A-Za-z0-9-]{10,}|\bhttps:\/\/hooks\.slack\.com\/services\/T[A-Za-z0-9]+\/B[A-Za-z0-9]+\/[A-Za-z0-9]+/g,
  },
  { kind: 'stripe_key', re: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{24,}\b/g },
  { kind: 'anthropic_key', re: /\bsk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{20,}/g },
  {
    kind: 'openai_key',
    re: /\bsk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}(?:T3BlbkFJ[A-Za-z0-9_-]{20,})?/g,
  },
  // header.payload.signature, the first two base64url JSON objects ("{" is "eyJ").
  { kind: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  // Our own: gth_ client tokens, gha_ admin keys and any gh?_ secret of ours (GitHub's are above).
  { kind: 'gatehouse_secret', re: /\b(?:gth|gh[a-z])_[A-Za-z0-9_-]{8,}/g },
];

/** Shannon entropy of a string, in bits per character. */
export function entropyBits(s: string): number {
  if (!s) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  const n = [...s].length;
  for (const c of counts.values()) {
    const p = c / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * A value that looks like a credential rather than a word or a setting: no
 * spaces, at least 8 characters, and varied enough (≥ 3 bits a character:
 * `hunter22` is not, `x7Kq9v-2mZ` is). Used only next to a key-like name.
 */
export function looksRandom(value: string): boolean {
  return value.length >= 8 && value.length <= 4096 && !/\s/.test(value) && entropyBits(value) >= 3;
}
