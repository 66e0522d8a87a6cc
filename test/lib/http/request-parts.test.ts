import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseCookies } from '../../../main/lib/http/cookies.ts';
import { addressBucket, clientAddress } from '../../../main/lib/http/client-address.ts';

describe('parseCookies (a bad escape once made every admin request answer 500)', () => {
  it('parses pairs, trims, unquotes and decodes', () => {
    expect({ ...parseCookies('a=1; b = two%20words ; c="q"') }).toEqual({ a: '1', b: 'two words', c: 'q' });
    expect({ ...parseCookies(undefined) }).toEqual({});
  });

  it('never throws: a malformed escape keeps the raw value, and the other cookies still count', () => {
    const c = parseCookies('junk=%E0%A4%A; gatehouse_session=abc; x=%');
    expect(c.junk).toBe('%E0%A4%A');
    expect(c.gatehouse_session).toBe('abc');
    expect(c.x).toBe('%');
  });

  it('the first of a repeated name wins, a nameless pair is skipped, __proto__ is just a name', () => {
    const c = parseCookies('s=first; s=second; =nameless; __proto__=p; constructor=k');
    expect(c.s).toBe('first');
    expect(Object.getPrototypeOf(c)).toBeNull();
    expect(c.__proto__).toBe('p');
    expect(c.constructor).toBe('k');
    expect(Object.keys(c)).toEqual(['s', '__proto__', 'constructor']);
  });
});

describe('clientAddress', () => {
  const req = (headers: Record<string, string>, peer = '127.0.0.1') =>
    ({ headers, socket: { remoteAddress: peer } }) as unknown as IncomingMessage;

  it('is the peer unless proxy headers are trusted', () => {
    expect(clientAddress(req({ 'x-forwarded-for': '203.0.113.7' }), false)).toBe('127.0.0.1');
    // The last element is the one the trusted proxy appended; the ones before it are the caller's own text.
    expect(clientAddress(req({ 'x-forwarded-for': '203.0.113.7, 10.0.0.1' }), true)).toBe('10.0.0.1');
    expect(clientAddress(req({ 'x-forwarded-for': '203.0.113.7' }), true)).toBe('203.0.113.7');
    expect(clientAddress(req({ 'x-forwarded-for': '203.0.113.7, 2001:db8::1' }), true)).toBe('2001:db8::1');
    // Only X-Forwarded-For is read: a caller's own Forwarded header (passed on by a proxy that appends
    // X-Forwarded-For) must not choose its address, with or without X-Forwarded-For beside it.
    expect(clientAddress(req({ forwarded: 'for=192.0.2.66', 'x-forwarded-for': '203.0.113.7' }), true)).toBe(
      '203.0.113.7',
    );
    expect(clientAddress(req({ forwarded: 'for=198.51.100.1:4711;proto=https' }), true)).toBe('127.0.0.1');
  });

  it('a forwarded value that is not address-shaped falls back to the peer (bounded rate-limit keys)', () => {
    expect(clientAddress(req({ 'x-forwarded-for': 'x'.repeat(5000) }), true)).toBe('127.0.0.1');
    expect(clientAddress(req({ 'x-forwarded-for': '<script>' }), true)).toBe('127.0.0.1');
  });
});

describe('addressBucket (one IPv6 host has a /64 of addresses to spread its connections over)', () => {
  it('counts IPv4 by address, mapped or not, and IPv6 by its /64 however it is written', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:0DB8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8:1:3::1')).not.toBe(addressBucket('2001:db8:1:2::1'));
    expect(addressBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1%eth0')).toBe(addressBucket('fe80::2%eth1'));
    expect(addressBucket('::ffff:abcd:1')).toBe('0:0:0:0::/64');
  });
});
