import { describe, expect, it } from 'vitest';
import {
  CLOUD_ERRORS,
  CloudErrorCode,
  contentDigestValue,
  signatureBase,
  signatureParamsValue,
} from '../../main/contract/cloud/index.ts';
import { ErrorCode, HTTP_STATUS } from '../../main/contract/errors.ts';
import { dictionaryMembers, parseSignature } from '../../cloud/crypto/request-signature.ts';
import { contentDigest, signatureBaseFromDesign, signHeaders } from './helpers/sign.ts';

describe('the signing contract', () => {
  it("builds docs/cloud-gateway.md's example signature base byte for byte", () => {
    const params = signatureParamsValue({ created: 1764000000, nonce: 'q1w2e3r4t5y6u7i8o9p0aa', keyid: 'key_abc' });
    const base = signatureBase({
      method: 'post',
      authority: 'Gateway.Example:8443',
      path: '/gateway/v1/entitlements/check',
      query: '',
      contentDigest: 'sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
      params,
    });
    expect(base).toBe(
      [
        '"@method": POST',
        '"@authority": gateway.example:8443',
        '"@path": /gateway/v1/entitlements/check',
        '"@query": ?',
        '"content-digest": sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
        '"@signature-params": ("@method" "@authority" "@path" "@query" "content-digest");created=1764000000;nonce="q1w2e3r4t5y6u7i8o9p0aa";keyid="key_abc";alg="hmac-sha256"',
      ].join('\n'),
    );
    expect(base).toBe(
      signatureBaseFromDesign(
        'POST',
        'gateway.example:8443',
        '/gateway/v1/entitlements/check',
        '',
        'sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
        params,
      ),
    );
  });

  it('digests the empty body as docs/cloud-gateway.md shows', () => {
    expect(contentDigest(Buffer.alloc(0))).toBe('sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:');
    expect(contentDigestValue('47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=')).toBe(contentDigest(Buffer.alloc(0)));
  });

  it('parses what the independent helper signs', () => {
    const h = signHeaders(
      { key_id: 'key_x', secret: 's' },
      {
        method: 'GET',
        url: 'http://h:1/gateway/v1/usage/history?a=1',
        created: 1700000000,
        nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
      },
    );
    const p = parseSignature({
      'signature-input': h['Signature-Input'],
      signature: h.Signature,
      'content-digest': h['Content-Digest'],
    });
    expect(p).toMatchObject({ created: 1700000000, nonce: 'AAAAAAAAAAAAAAAAAAAAAA', keyid: 'key_x' });
    expect(p.mac).toHaveLength(32);
  });

  it.each([
    ['no headers', {}],
    [
      'another label only',
      {
        'signature-input': 'other=("@method");created=1',
        signature: 'other=:AA==:',
        'content-digest': 'sha-256=:AA==:',
      },
    ],
    [
      'components in another order',
      {
        'signature-input':
          'gatehouse=("@path" "@method" "@authority" "@query" "content-digest");created=1;nonce="AAAAAAAAAAAAAAAAAAAAAA";keyid="k";alg="hmac-sha256"',
        signature: `gatehouse=:${Buffer.alloc(32).toString('base64')}:`,
        'content-digest': 'sha-256=:AA==:',
      },
    ],
    [
      'a missing parameter',
      {
        'signature-input':
          'gatehouse=("@method" "@authority" "@path" "@query" "content-digest");created=1;keyid="k";alg="hmac-sha256"',
        signature: `gatehouse=:${Buffer.alloc(32).toString('base64')}:`,
        'content-digest': 'sha-256=:AA==:',
      },
    ],
    [
      'another algorithm',
      {
        'signature-input':
          'gatehouse=("@method" "@authority" "@path" "@query" "content-digest");created=1;nonce="AAAAAAAAAAAAAAAAAAAAAA";keyid="k";alg="rsa-pss-sha512"',
        signature: `gatehouse=:${Buffer.alloc(32).toString('base64')}:`,
        'content-digest': 'sha-256=:AA==:',
      },
    ],
    [
      'a short nonce',
      {
        'signature-input':
          'gatehouse=("@method" "@authority" "@path" "@query" "content-digest");created=1;nonce="abc";keyid="k";alg="hmac-sha256"',
        signature: `gatehouse=:${Buffer.alloc(32).toString('base64')}:`,
        'content-digest': 'sha-256=:AA==:',
      },
    ],
    [
      'a huge header',
      {
        'signature-input': `gatehouse=${'x'.repeat(5000)}`,
        signature: 'gatehouse=:AA==:',
        'content-digest': 'sha-256=:AA==:',
      },
    ],
  ])('refuses %s as signature_invalid', (_name, headers) => {
    expect(() => parseSignature(headers)).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
  });

  it('splits structured-field dictionaries without breaking quoted strings or inner lists', () => {
    const m = dictionaryMembers('a=("x" "y");n="p,q", gatehouse=:YWJj:, z=1');
    expect(m.get('a')).toBe('("x" "y");n="p,q"');
    expect(m.get('gatehouse')).toBe(':YWJj:');
  });

  it("every cloud error code is one of the contract's codes, with its status", () => {
    for (const code of CloudErrorCode.options) {
      expect(ErrorCode.options).toContain(code);
      if (HTTP_STATUS[code] !== undefined && code !== 'rate_limited')
        expect(CLOUD_ERRORS[code].status).toBe(HTTP_STATUS[code]);
    }
    expect(CLOUD_ERRORS.quota_exceeded).toEqual({ status: 429, retryable: false });
    expect(CLOUD_ERRORS.signature_invalid.status).toBe(401);
  });
});
