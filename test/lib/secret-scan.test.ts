import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { maskSecrets, maskSecretText, scanSecrets, SCAN_LIMITS, UNCHECKED } from '../../main/lib/secret-scan.ts';
import { redact, REDACTED } from '../../main/lib/redact.ts';

// The secret scanner's rule set (docs/secrets.md), each rule with samples that
// must be found and near-misses that must not. Samples are assembled at run
// time so the repository holds no string a secret scanner would flag.

const alnum = (n: number, seed = 'A1b2C3d4E5f6G7h8') => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

const POSITIVE: Array<[kind: string, sample: string]> = [
  ['private_key', `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA${alnum(60)}\n-----END RSA PRIVATE KEY-----`],
  ['private_key', `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${alnum(40)}`],
  ['private_key', `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${alnum(64)}\n-----END ENCRYPTED PRIVATE KEY-----`],
  ['aws_access_key_id', `AKIA${'IOSFODNN7EXAMPLE'}`],
  ['aws_access_key_id', `id ASIA${'Y34FZKBOKMUTVV7A'} here`],
  ['aws_secret_access_key', `aws_secret_access_key = ${'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'}`],
  ['gcp_service_account_key', `{"type": "service_account", "project_id": "p", "private_key": "..."}`],
  ['github_token', `ghp_${alnum(36)}`],
  ['github_token', `github_pat_${alnum(22)}_${alnum(59)}`],
  ['gitlab_token', `glpat-${alnum(20)}`],
  ['slack_token', `xoxb-${'1234567890'}-${alnum(24)}`],
  ['slack_token', `https://hooks.slack.com/services/T${alnum(8)}/B${alnum(8)}/${alnum(24)}`],
  ['stripe_key', `sk_live_${alnum(24)}`],
  ['stripe_key', `rk_test_${alnum(24)}`],
  ['openai_key', `sk-proj-${alnum(48)}`],
  ['openai_key', `sk-${alnum(48)}`],
  ['anthropic_key', `sk-ant-api03-${alnum(90)}`],
  ['jwt', `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${alnum(43)}`],
  ['gatehouse_secret', `gth_${alnum(43)}`],
  ['gatehouse_secret', `gha_${alnum(43)}`],
  ['secret_named_value', 'password: x7Kq9v-2mZpL0'],
  ['secret_named_value', 'API_KEY=Zq81-kPw0xLm'],
];

const NEGATIVE: string[] = [
  'AKIA is the prefix of an access key id',
  'sk-learn is a library; sk-short',
  'the gth_ prefix, and a preview gth_…abcd',
  'eyJ alone, or eyJhbGciOiJIUzI1NiJ9 without the rest',
  '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----',
  'commit 3f786850e387550fdab836ed7e6dc881de23001b',
  'id 0192f1a4-7c1e-7a4b-9d3e-5f6a7b8c9d0e',
  'password: hunter22',
  'Bearer tokens are checked; the key is in the vault',
  'xoxb- is how bot tokens start',
  'https://hooks.slack.com/services/ is the webhook host',
];

describe('scanSecrets: the rule set', () => {
  it.each(POSITIVE)('finds %s', (kind, sample) => {
    expect(scanSecrets(sample).map((f) => f.kind)).toContain(kind);
    expect(scanSecrets({ wrapped: [`before ${sample} after`] })).toContainEqual({ kind, path: '$.wrapped[0]' });
  });

  it.each(NEGATIVE)('finds nothing in %j', (sample) => {
    expect(scanSecrets(sample)).toEqual([]);
    expect(scanSecrets({ note: sample })).toEqual([]);
  });

  it('a high-entropy value under a key-like name is found; the same under another name, a low-entropy one, or a safe name is not', () => {
    expect(scanSecrets({ client_secret: 'x7Kq9v-2mZpL', headers: { 'X-Api-Key': 'Zq81kPw0xLmN' } })).toEqual([
      { kind: 'secret_named_value', path: '$.client_secret' },
      { kind: 'secret_named_value', path: '$.headers["X-Api-Key"]' },
    ]);
    expect(
      scanSecrets({
        comment: 'x7Kq9v-2mZpL',
        password: 'hunter22',
        key_id: 'key_9fA2kLm3Qz',
        token_count: 12345678,
        public_key: 'x7Kq9v-2mZpL',
      }),
    ).toEqual([]);
  });

  it('a GCP service-account key object is found as such, its private key too', () => {
    const key = {
      type: 'service_account',
      project_id: 'demo',
      private_key_id: 'abc',
      private_key: `-----BEGIN PRIVATE KEY-----\n${alnum(64)}\n-----END PRIVATE KEY-----\n`,
      client_email: 'x@demo.iam.gserviceaccount.com',
    };
    const found = scanSecrets({ creds: key });
    expect(found).toContainEqual({ kind: 'gcp_service_account_key', path: '$.creds' });
    expect(found).toContainEqual({ kind: 'private_key', path: '$.creds.private_key' });
  });

  it('paths name odd keys and array places exactly', () => {
    const jwt = POSITIVE.find(([k]) => k === 'jwt')![1];
    expect(scanSecrets({ 'odd key': [{ x: jwt }], __proto__x: jwt })).toEqual([
      { kind: 'jwt', path: '$["odd key"][0].x' },
      { kind: 'jwt', path: '$.__proto__x' },
    ]);
    expect(scanSecrets(jwt)).toEqual([{ kind: 'jwt', path: '$' }]);
  });
});

describe('maskSecrets and the log redactor', () => {
  it('masks every positive sample in text, in a value at any depth, and in a log line', () => {
    for (const [, sample] of POSITIVE.filter(([k]) => k !== 'gcp_service_account_key')) {
      const secret =
        sample.includes('=') || sample.includes(': ')
          ? sample
              .split(/[=:] ?/)
              .pop()!
              .trim()
          : sample;
      expect(maskSecretText(`x ${sample} y`)).not.toContain(secret);
      expect(JSON.stringify(maskSecrets({ a: [{ b: `x ${sample} y` }] }))).not.toContain(secret);
      if (!sample.startsWith('password') && !sample.startsWith('API_KEY'))
        expect(redact(`x ${sample} y`)).not.toContain(secret);
    }
  });

  it('leaves the negative samples as they are', () => {
    for (const sample of NEGATIVE.filter((s) => !s.startsWith('password'))) expect(maskSecretText(sample)).toBe(sample);
  });

  it('replaces every string or number under a key-like name (a password need not look random), keeps the rest', () => {
    expect(
      maskSecrets({
        path: '/tmp/a',
        password: 'hunter22',
        pin_code: 7,
        port: 7,
        api_key: 123456,
        note: 'ok',
        keep: true,
        n: null,
      }),
    ).toEqual({
      path: '/tmp/a',
      password: REDACTED,
      pin_code: REDACTED,
      port: 7,
      api_key: REDACTED,
      note: 'ok',
      keep: true,
      n: null,
    });
  });

  it('`__proto__` stays a plain own key: found, masked, and nothing polluted', () => {
    const value = JSON.parse(`{"__proto__": {"password": "x7Kq9v-2mZpL", "polluted": "yes"}}`) as unknown;
    expect(scanSecrets(value)).toEqual([{ kind: 'secret_named_value', path: '$.__proto__.password' }]);
    const out = maskSecrets(value) as Record<string, unknown>;
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(JSON.stringify(out)).toBe(`{"__proto__":{"password":"${REDACTED}","polluted":"yes"}}`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('bounded, and never a crash', () => {
  it('a deep value (10 000 levels) is cut at the depth limit: reported, and masked as unchecked', () => {
    let deep: unknown = `gth_${alnum(43)}`;
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    expect(scanSecrets(deep)).toEqual([{ kind: 'scan_limit', path: `$${'.d'.repeat(SCAN_LIMITS.depth)}` }]);
    expect(JSON.stringify(maskSecrets(deep))).toContain(UNCHECKED);
  });

  it('too many nodes or characters: the rest is reported once and masked as unchecked, never passed on', () => {
    const wide = Array.from({ length: SCAN_LIMITS.nodes + 10 }, () => 'x');
    expect(scanSecrets(wide).filter((f) => f.kind === 'scan_limit')).toHaveLength(1);
    expect((maskSecrets(wide) as string[]).at(-1)).toBe(UNCHECKED);
    const huge = 'a'.repeat(SCAN_LIMITS.chars + 1);
    expect(scanSecrets({ huge })).toEqual([{ kind: 'scan_limit', path: '$.huge' }]);
    expect(maskSecrets({ huge })).toEqual({ huge: UNCHECKED });
  });

  it('a cycle or a throwing getter is no crash', () => {
    const a: Record<string, unknown> = { token: 'x' };
    a.self = a;
    expect(() => scanSecrets(a)).not.toThrow();
    expect(JSON.stringify(maskSecrets(a))).toContain('[circular]');
    const bad = Object.defineProperty({}, 'boom', {
      enumerable: true,
      get: () => {
        throw new Error('no');
      },
    });
    expect(scanSecrets(bad)).toEqual([{ kind: 'scan_limit', path: '$' }]);
    expect(maskSecrets(bad)).toBe(UNCHECKED);
  });

  it('any value: no throw, a JSON answer, and a secret placed anywhere in JSON never survives masking', () => {
    const token = `ghp_${alnum(36)}`;
    fc.assert(
      fc.property(fc.anything({ maxDepth: 6 }), (v) => {
        const found = scanSecrets(v);
        expect(Array.isArray(found)).toBe(true);
        for (const f of found) expect(typeof f.kind === 'string' && f.path.startsWith('$')).toBe(true);
        maskSecrets(v);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.string({ maxLength: 20 }), (v, key) => {
        const out = JSON.stringify(maskSecrets({ data: v, [key || 'k']: `see ${token}.`, list: [v, token] }));
        expect(out).not.toContain(token);
        expect(scanSecrets({ data: v, list: [token] }).some((f) => f.kind === 'github_token')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

// Secret shapes that were once shown in clear on the desk: each is found and masked.
describe('the scanner knows the shapes people paste', () => {
  const GHP = 'ghp_' + 'Zr8kQ2mW7xL4nB9vC3tY6uP1sD5fG0hJ8kE2';
  const GTH = 'gth_TMHVndTODJjOaiKXMUpmNPKKGvZQpP65rS1dno-8fgk';
  const kinds = (v: unknown) => scanSecrets(v).map((f) => f.kind);

  it('a password in a URL or DSN: only the password is masked', () => {
    for (const [text, shown] of [
      ['postgres://app:s3cr3t-Pw@db.internal:5432/shop', 'postgres://app:[redacted]@db.internal:5432/shop'],
      ['see https://user:hunter2@example.com/x', 'see https://user:[redacted]@example.com/x'],
      ['redis://:onlypass@cache:6379', 'redis://:[redacted]@cache:6379'],
    ] as const) {
      expect(kinds(text)).toContain('url_password');
      expect(maskSecretText(text)).toBe(shown);
    }
    for (const plain of ['http://localhost:8080/path', 'https://example.com/a@b', 'mailto:me@example.com'])
      expect(maskSecretText(plain)).toBe(plain);
  });

  it('a {name, value} pair whose name is secret, whatever the value looks like', () => {
    const headers = [
      { name: 'X-Api-Key', value: 'plain-words' },
      { name: 'Accept', value: 'application/json' },
      { header: 'Authorization', value: 'abc' },
    ];
    expect(scanSecrets({ headers }).map((f) => f.path)).toEqual(
      expect.arrayContaining(['$.headers[0].value', '$.headers[2].value']),
    );
    expect(maskSecrets({ headers })).toEqual({
      headers: [
        { name: 'X-Api-Key', value: REDACTED },
        { name: 'Accept', value: 'application/json' },
        { header: 'Authorization', value: REDACTED },
      ],
    });
  });

  it('fields named pwd, pin, otp, dsn, passcode', () => {
    expect(maskSecrets({ pwd: 'a', pin: '1234', otp: 123456, dsn: 'x', passcode: 'y', spin: 'ok' })).toEqual({
      pwd: REDACTED,
      pin: REDACTED,
      otp: REDACTED,
      dsn: REDACTED,
      passcode: REDACTED,
      spin: 'ok',
    });
  });

  it('a token used as an object key', () => {
    expect(kinds({ [GTH]: { scope: 'all' } })).toContain('gatehouse_secret');
    const masked = maskSecrets({ [GTH]: 1, [GHP]: 2, plain: 3 }) as Record<string, unknown>;
    expect(JSON.stringify(masked)).not.toContain(GTH);
    expect(JSON.stringify(masked)).not.toContain(GHP.slice(4));
    expect(Object.keys(masked)).toHaveLength(3);
    expect(masked.plain).toBe(3);
  });

  it('base64 of a known token (Basic auth, a pasted config)', () => {
    const b64 = btoa(`user:${GHP}`);
    const text = `Authorisation header was ${b64} yesterday`;
    expect(kinds(text)).toContain('encoded_secret');
    expect(maskSecretText(text)).toBe('Authorisation header was [redacted] yesterday');
    const plain = btoa('just some ordinary words here, nothing more');
    expect(maskSecretText(plain)).toBe(plain);
  });

  it('a PEM header with two spaces', () => {
    const pem = '-----BEGIN RSA  PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x\n-----END RSA  PRIVATE KEY-----';
    expect(kinds(pem)).toContain('private_key');
    expect(maskSecretText(pem)).toBe(REDACTED);
  });

  it('full-width and zero-width variants of a token', () => {
    const fullWidth = [...GHP].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join('');
    const zeroWidth = `${GHP.slice(0, 6)}\u200b${GHP.slice(6, 20)}\u200d${GHP.slice(20)}`;
    for (const t of [fullWidth, zeroWidth, `token: ${zeroWidth}`]) {
      expect(kinds(t)).toContain('github_token');
      expect(maskSecretText(t)).not.toMatch(/Zr8kQ2mW7xL4nB9v|Ｚｒ８ｋ/);
    }
    // text without a hidden secret keeps its own characters
    expect(maskSecretText('ｆｕｌｌ　ｗｉｄｔｈ prose')).toBe('ｆｕｌｌ　ｗｉｄｔｈ prose');
  });
});
