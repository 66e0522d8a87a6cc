import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSecretName, redact, redactFields, Redactor, REDACTED } from '../../main/lib/redact.ts';

const token = (): string => `gth_${randomBytes(32).toString('base64url')}`;

describe('redact: one redactor for the service, the bridge and the cloud', () => {
  it('masks gth_ tokens, gha_ admin keys and other gh?_ secrets by shape', () => {
    const t = token();
    const k = `gha_${randomBytes(32).toString('base64url')}`;
    const l = `ghl_${randomBytes(20).toString('base64url')}`;
    const out = redact(`a ${t} b ${k} c ${l}`);
    expect(out).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED}`);
    // previews and prose stay
    expect(redact('token gth_…abcd, the gth_ prefix')).toBe('token gth_…abcd, the gth_ prefix');
  });

  it('masks Bearer and Basic credentials, but not prose', () => {
    expect(redact('sent Bearer abc.def-ghi_jkl')).toBe(`sent Bearer ${REDACTED}`);
    expect(redact('basic dXNlcjpwYXNzd29yZA==')).toBe(`basic ${REDACTED}`);
    expect(redact('bearer tokens are checked; basic settings')).toBe('bearer tokens are checked; basic settings');
  });

  it('masks header dumps anywhere in a line', () => {
    expect(redact('Cookie: session=abc; other=def')).toBe(`Cookie: ${REDACTED}`);
    expect(redact('header=Authorization: Bearer abcdefghijkl')).toBe(`header=Authorization: ${REDACTED}`);
    expect(redact('X-Api-Key: 12345\nnext line')).toBe(`X-Api-Key: ${REDACTED}\nnext line`);
  });

  it('masks secret-named pairs (key, token, secret, password, cookie, authorization, license key) in text and JSON', () => {
    const out = redact(
      'GET /cb?code=1&token=s3cr3tvalue&state=ok password=hunter22 license_key=LIC-1234 apiKey=zzz token_id=tok_1 key_id=key_abc',
    );
    expect(out).toContain(`token=${REDACTED}`);
    expect(out).toContain(`password=${REDACTED}`);
    expect(out).toContain(`license_key=${REDACTED}`);
    expect(out).toContain(`apiKey=${REDACTED}`);
    expect(out).toContain('code=1');
    expect(out).toContain('token_id=tok_1');
    expect(out).toContain('key_id=key_abc');
    expect(redact('{"site_secret": "abc\\"def", "site_id": "s1", "kid": "k1"}')).toBe(
      `{"site_secret": "${REDACTED}", "site_id": "s1", "kid": "k1"}`,
    );
  });

  it('isSecretName splits snake, kebab and camel case into words', () => {
    for (const n of [
      'token',
      'Authorization',
      'x-api-key',
      'apiKey',
      'license_key',
      'siteSecret',
      'set-cookie',
      'admin_key',
      'key',
      'password',
      'client_credentials',
    ])
      expect(isSecretName(n)).toBe(true);
    for (const n of [
      'token_id',
      'key_id',
      'keyid',
      'kid',
      'token_preview',
      'tokens_input',
      'monkey',
      'keyboard',
      'public_key',
      'keys',
      'Idempotency-Key',
      'rate_limit',
      'site_id',
      'key_fingerprint',
      'fingerprint',
    ])
      expect(isSecretName(n)).toBe(false);
  });

  it("keeps a public key's fingerprint (the cloud client's 'connected' line) and still masks the secrets beside it", () => {
    const out = redactFields({
      key_fingerprint: 'ab:cd:ef:01',
      site_secret: 'ghs_0123456789abcdef',
      public_key: 'kid:xyz',
    }) as Record<string, unknown>;
    expect(JSON.parse(JSON.stringify(out))).toEqual({
      key_fingerprint: 'ab:cd:ef:01',
      site_secret: REDACTED,
      public_key: 'kid:xyz',
    });
  });

  it('redactFields: deep, secret-named fields masked, numbers kept, null prototype', () => {
    const t = token();
    const out = redactFields({
      token: t,
      nested: { headers: { authorization: 'x', accept: 'json' }, note: `copy ${t}` },
      tokens_input: 5,
      has_password: true,
      list: [t],
    }) as Record<string, unknown>;
    expect(JSON.parse(JSON.stringify(out))).toEqual({
      token: REDACTED,
      nested: { headers: { authorization: REDACTED, accept: 'json' }, note: `copy ${REDACTED}` },
      tokens_input: 5,
      has_password: true,
      list: [REDACTED],
    });
    const proto = redactFields(JSON.parse('{"__proto__": {"x": 1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBeNull();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('Redactor also masks the exact values it was given', () => {
    const r = new Redactor();
    r.add('plain-shapeless-value');
    r.add('abc'); // too short to mask safely: ignored
    expect(r.apply('server said plain-shapeless-value and abc, Bearer 0123456789')).toBe(
      `server said ${REDACTED} and abc, Bearer ${REDACTED}`,
    );
  });
});
