import { describe, expect, it } from 'vitest';
import { ClientCapabilities } from '../../main/mcp/client-capabilities.ts';
import { Routes2025, MAX_OPEN_CALLS_PER_TOKEN, type CallRoute } from '../../main/mcp/routes-2025.ts';
import { HttpError } from '../../main/lib/http/http-error.ts';
import { argsDigest } from '../../main/mcp/request-state.ts';
import { askedSummary, missingCapability } from '../../main/plugins/upstream/client-asks.ts';

describe('what a client declared (2025 era, remembered per token)', () => {
  it('keeps the last initialize per token; a hostile or huge declaration is kept as plain data or not at all', () => {
    const m = new ClientCapabilities();
    expect(m.seen({ method: 'tools/call' }, 't1')).toBeUndefined();
    expect(m.seen({ method: 'initialize', params: { capabilities: { sampling: {} } } }, 't1')).toEqual({
      sampling: {},
    });
    expect(m.seen({ method: 'tools/call' }, 't1')).toEqual({ sampling: {} });
    expect(m.seen({ method: 'tools/call' }, 't2')).toBeUndefined();
    const hostile = m.seen(
      {
        method: 'initialize',
        params: { capabilities: JSON.parse('{"__proto__":{"elicitation":{}}}') as Record<string, unknown> },
      },
      't1',
    )!;
    expect(Object.getPrototypeOf(hostile)).toBeNull();
    expect(missingCapability({ method: 'elicitation/create', params: {} }, hostile)).toBe('elicitation');
    expect(m.seen({ method: 'initialize', params: { capabilities: { x: 'y'.repeat(10_000) } } }, 't1')).toBeUndefined();
  });
});

describe('which capability an ask needs', () => {
  it('form mode from a bare elicitation, URL mode only when declared, sampling with tools only with sampling.tools', () => {
    const form = { method: 'elicitation/create', params: { message: 'm' } };
    const url = { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://x' } };
    expect(missingCapability(form, { elicitation: {} })).toBeNull();
    expect(missingCapability(url, { elicitation: {} })).toBe('elicitation.url');
    expect(missingCapability(form, { elicitation: { url: {} } })).toBe('elicitation.form');
    expect(missingCapability(url, { elicitation: { url: {} } })).toBeNull();
    expect(missingCapability({ method: 'sampling/createMessage', params: { tools: [] } }, { sampling: {} })).toBe(
      'sampling.tools',
    );
    expect(missingCapability({ method: 'roots/list', params: {} }, { roots: {} })).toBe('roots/list');
    expect(askedSummary(['sampling/createMessage', 'elicitation/create:form', 'elicitation/create:form'])).toBe(
      'sampling/createMessage, elicitation/create:form x2',
    );
  });

  it('an arguments digest ignores key order and tells other values apart', () => {
    expect(argsDigest({ a: 1, b: { c: 2, d: 3 } })).toBe(argsDigest({ b: { d: 3, c: 2 }, a: 1 }));
    expect(argsDigest({ a: 1 })).not.toBe(argsDigest({ a: 2 }));
  });
});

describe('routing what a 2025 client posts back', () => {
  it('an answer reaches the exchange that asked, with its original id, once, and only for the same token', () => {
    const r = new Routes2025();
    const got: unknown[] = [];
    const wire = r.expect('tok', 0, (m) => got.push(m));
    expect(wire).toMatch(/^gatehouse-/);
    expect(r.route('other', { id: wire })).toBe(false);
    expect(r.route('tok', { id: wire })).toBe(true);
    expect(got).toEqual([{ id: 0 }]);
    expect(r.route('tok', { id: wire })).toBe(false);
  });

  it('a cancellation reaches the call it names, for the same token, until the call ends', () => {
    const r = new Routes2025();
    const got: unknown[] = [];
    const route = r.open('tok', 7) as CallRoute;
    route.deliver = (m) => got.push(m);
    const cancel = { method: 'notifications/cancelled', params: { requestId: 7 } };
    expect(r.route('other', cancel)).toBe(false);
    expect(r.route('tok', { method: 'notifications/cancelled', params: { requestId: '7' } })).toBe(false);
    expect(r.route('tok', cancel)).toBe(true);
    route.close();
    expect(r.route('tok', cancel)).toBe(false);
    expect(got).toHaveLength(1);
  });

  it('two calls of a token with one id keep a route each: a cancellation reaches one only when it is the only one; a bounded number per token', () => {
    const r = new Routes2025();
    const got: string[] = [];
    const first = r.open('tok', 7) as CallRoute;
    const second = r.open('tok', 7) as CallRoute;
    first.deliver = () => got.push('first');
    second.deliver = () => got.push('second');
    const cancel = { method: 'notifications/cancelled', params: { requestId: 7 } };
    expect(r.route('tok', cancel)).toBe(false);
    expect(got).toEqual([]);
    second.close();
    second.close();
    expect(r.route('tok', cancel)).toBe(true);
    expect(got).toEqual(['first']);
    first.close();
    expect(r.route('tok', cancel)).toBe(false);

    const many = Array.from({ length: MAX_OPEN_CALLS_PER_TOKEN }, (_, i) => r.open('tok', i % 3) as CallRoute);
    expect(r.open('tok', 'one-too-many')).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(r.open('other', 1)).not.toBeInstanceOf(HttpError);
    many[0]!.close();
    expect(r.open('tok', 'one-too-many')).not.toBeInstanceOf(HttpError);
  });
});
