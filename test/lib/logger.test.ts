import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatehouseError } from '../../main/core/errors.ts';
import { createLogger } from '../../main/lib/logger.ts';
import { redact } from '../../main/lib/redact.ts';

const token = (): string => `gth_${randomBytes(32).toString('base64url')}`;
const adminKey = (): string => `gha_${randomBytes(32).toString('base64url')}`;

function sink(): { stream: PassThrough; lines: () => string[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
  return { stream, lines: () => text.split('\n').filter(Boolean) };
}

describe('redact', () => {
  it('masks tokens, admin keys and bearer values anywhere in text', () => {
    const t = token();
    const k = adminKey();
    expect(t).toHaveLength(47);
    const out = redact(`client sent ${t}, admin used ${k}; header Authorization: Bearer abc.def-ghi_jkl`);
    expect(out).not.toContain(t);
    expect(out).not.toContain(k);
    expect(out).not.toContain('abc.def-ghi_jkl');
    expect(out).toContain('client sent [redacted], admin used [redacted]');
  });

  it('masks secret-named pairs in URLs, forms, header dumps and JSON, but not ids or previews', () => {
    const out = redact(
      'GET /cb?code=1&token=s3cr3tvalue&state=ok password=hunter22 token_id=tok_123 token_preview=gth_…abcd',
    );
    expect(out).toContain('token=[redacted]');
    expect(out).toContain('password=[redacted]');
    expect(out).toContain('code=1');
    expect(out).toContain('state=ok');
    expect(out).toContain('token_id=tok_123');
    expect(out).toContain('token_preview=gth_…abcd');
    expect(redact('{"client_secret": "abc\\"def", "site_id": "s1"}')).toBe(
      '{"client_secret": "[redacted]", "site_id": "s1"}',
    );
    expect(redact('Cookie: session=abc; other=def')).toBe('Cookie: [redacted]');
  });

  it('leaves ordinary prose alone', () => {
    const text = 'invalid token: expected the gth_ prefix; bearer tokens are checked; rate_limit=120';
    expect(redact(text)).toBe(text);
  });
});

describe('createLogger', () => {
  it('writes one JSON line per record with secret-named fields masked and strings redacted', () => {
    const { stream, lines } = sink();
    const log = createLogger({ stream, json: true, level: 'debug' });
    const t = token();
    log.info(`issued ${t}`, {
      token: t,
      password: 'hunter2',
      headers: { Authorization: `Bearer ${t}`, cookie: 'a=b', accept: 'json' },
      note: `copy of ${t}`,
      token_id: 'tok_1',
      tokens_input: 12,
      err: new GatehouseError('unauthorized', `bad token ${t}`),
    });
    const out = lines();
    expect(out).toHaveLength(1);
    expect(out[0]).not.toContain(t);
    expect(out[0]).not.toContain('hunter2');
    const rec = JSON.parse(out[0] as string);
    expect(rec).toMatchObject({
      level: 'info',
      msg: 'issued [redacted]',
      token: '[redacted]',
      password: '[redacted]',
      headers: { Authorization: '[redacted]', cookie: '[redacted]', accept: 'json' },
      note: 'copy of [redacted]',
      token_id: 'tok_1',
      tokens_input: 12,
      err: { name: 'GatehouseError', message: 'bad token [redacted]' },
    });
    expect(Number.isNaN(Date.parse(rec.at))).toBe(false);
  });

  it('writes readable text lines by default, one per record, and honours the level', () => {
    const { stream, lines } = sink();
    const log = createLogger({ stream, level: 'warn' });
    const k = adminKey();
    log.debug('hidden');
    log.info('hidden too');
    log.warn('two\nlines', { admin_key: k, count: 3 });
    log.error('boom', { where: 'a b' });
    const out = lines();
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^\S+Z WARN {2}two\\nlines admin_key=\[redacted\] count=3$/);
    expect(out[1]).toMatch(/ERROR boom where="a b"$/);
    expect(out.join('\n')).not.toContain(k);
  });

  it('child loggers carry their bindings, redacted like everything else', () => {
    const { stream, lines } = sink();
    const child = createLogger({ stream, json: true }).child({ component: 'bridge', api_key: 'k-123456' });
    child.info('hello');
    expect(JSON.parse(lines()[0] as string)).toMatchObject({
      component: 'bridge',
      api_key: '[redacted]',
      msg: 'hello',
    });
  });

  it('survives circular fields and a stream that throws', () => {
    const { stream, lines } = sink();
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    createLogger({ stream, json: true }).info('loop', { a });
    expect(JSON.parse(lines()[0] as string).a).toEqual({ name: 'a', self: '[circular]' });
    const broken = new PassThrough();
    broken.write = () => {
      throw new Error('EPIPE');
    };
    expect(() => createLogger({ stream: broken }).error('still fine')).not.toThrow();
  });
});
