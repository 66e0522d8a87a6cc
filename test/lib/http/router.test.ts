import { describe, expect, it } from 'vitest';
import { Router } from '../../../main/lib/http/router.ts';
import { HttpError } from '../../../main/lib/http/http-error.ts';
import { decodePathPart, requestTarget } from '../../../main/lib/http/url.ts';
import type { IncomingMessage } from 'node:http';

describe('Router', () => {
  const r = new Router<string>()
    .get('/health', 'health')
    .post('/tokens', 'create')
    .get('/tokens/:id', 'show')
    .on('DELETE', '/tokens/:id', 'revoke')
    .on(['GET', 'POST'], '/staged/:id/:action', 'staged')
    .get('/console/*', 'console')
    .on('*', '/any', 'any');

  it('matches static paths, :params (decoded) and a trailing *', () => {
    expect(r.match('GET', '/health')).toEqual({ handler: 'health', params: {} });
    expect(r.match('get', '/tokens/tok_1')).toMatchObject({ handler: 'show', params: { id: 'tok_1' } });
    expect(r.match('DELETE', '/tokens/a%20b')).toMatchObject({ handler: 'revoke', params: { id: 'a b' } });
    expect(r.match('POST', '/staged/st_9/confirm')).toMatchObject({
      handler: 'staged',
      params: { id: 'st_9', action: 'confirm' },
    });
    expect(r.match('GET', '/console/')).toMatchObject({ handler: 'console', params: { '*': '' } });
    expect(r.match('GET', '/console/assets/a.js')).toMatchObject({
      handler: 'console',
      params: { '*': 'assets/a.js' },
    });
    // the rest stays encoded: it may be routed again, where %2F must not become a separator
    expect(r.match('GET', '/console/a%2Fb')).toMatchObject({ params: { '*': 'a%2Fb' } });
    expect(r.match('PATCH', '/any')).toMatchObject({ handler: 'any' });
  });

  it('tells a path known under other methods ({allow}) from an unknown one (null)', () => {
    expect(r.match('PUT', '/tokens/x')).toEqual({ allow: ['GET', 'DELETE'] });
    expect(r.match('GET', '/tokens')).toEqual({ allow: ['POST'] });
    expect(r.match('GET', '/nothing')).toBeNull();
    expect(r.match('GET', '/tokens/')).toBeNull(); // an empty :param is no match
    expect(r.match('GET', '/tokens/a/b')).toBeNull();
    expect(r.match('GET', '/console')).toBeNull(); // '/console/*' needs the slash
  });

  it('params have no prototype: a parameter value or name like __proto__ is plain data', () => {
    const m = r.match('GET', '/tokens/__proto__');
    expect(m?.handler).toBe('show');
    expect(m && 'params' in m ? Object.getPrototypeOf(m.params) : 'x').toBeNull();
    expect(m && 'params' in m ? m.params.id : '').toBe('__proto__');
  });

  it('a malformed percent-escape is a 400 HttpError, not a URIError', () => {
    let err: unknown;
    try {
      r.match('GET', '/tokens/%E0%A4%A');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(400);
    expect(() => decodePathPart('%')).toThrow(HttpError);
    expect(decodePathPart('plain')).toBe('plain');
  });

  it('refuses a route defined twice and a * that is not last', () => {
    expect(() => new Router<string>().get('/a', 'x').get('/a', 'y')).toThrow(/twice/);
    expect(() => new Router<string>().get('/a/*/b', 'x')).toThrow(/last/);
  });
});

describe('requestTarget', () => {
  const t = (url: string) => requestTarget({ url } as IncomingMessage);
  it('splits path and query without normalising, and reduces absolute-form to its path', () => {
    expect(t('/a/b?x=1&y=2').path).toBe('/a/b');
    expect(t('/a/b?x=1&y=2').query.get('y')).toBe('2');
    expect(t('//evil.example/x').path).toBe('//evil.example/x');
    expect(t('http://127.0.0.1:7823/mcp?q').path).toBe('/mcp');
    expect(() => t('*')).toThrow(HttpError);
  });
});
