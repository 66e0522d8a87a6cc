import { describe, expect, it } from 'vitest';
import { decide, isPrivateAddress } from '../../../../main/plugins/upstream/sandbox/net-proxy.ts';

const g = (s: string) => {
  const m = /^(\*\.)?(.+?)(?::(\d+))?$/.exec(s)!;
  return { wildcard: !!m[1], host: m[2]!, port: m[3] ? Number(m[3]) : null };
};

describe("the proxy's decision", () => {
  it('passes only granted hosts and ports: a bare host means 80 and 443', async () => {
    expect(await decide([g('localhost:8080')], 'localhost', 8080)).toEqual({ ok: true, address: '127.0.0.1' });
    expect(await decide([g('localhost:8080')], 'localhost', 8081)).toEqual({ ok: false, why: 'not granted' });
    expect(await decide([g('127.0.0.1')], '127.0.0.1', 22)).toEqual({ ok: false, why: 'not granted' });
    expect(await decide([g('*.localhost')], 'api.localhost', 443)).toEqual({ ok: true, address: '127.0.0.1' });
    expect(await decide([g('*.localhost')], 'localhost', 443)).toMatchObject({ ok: false });
  });

  it('knows the private ranges', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:10.0.0.1',
      '0.0.0.0',
    ])
      expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['8.8.8.8', '172.32.0.1', '2606:4700::1111']) expect(isPrivateAddress(a), a).toBe(false);
  });
});
