import { describe, expect, it } from 'vitest';
import { PRINCIPALS } from '../../../main/contract/principal.ts';
import { csrf } from '../../../main/rest/guards/csrf.ts';
import { adminRequest } from './request.ts';

const session = { kind: 'person', surface: 'console', via: 'session', session: 'sid' } as const;

describe('csrf', () => {
  it('refuses a state-changing call made with the session cookie without X-Gatehouse-CSRF: 1', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(csrf({ ...adminRequest({}, method), who: session as never }), method).toMatchObject({ code: 'forbidden' });
      expect(csrf({ ...adminRequest({ 'x-gatehouse-csrf': '0' }, method), who: session as never })).toMatchObject({
        code: 'forbidden',
      });
      expect(csrf({ ...adminRequest({ 'x-gatehouse-csrf': '1' }, method), who: session as never })).toBeNull();
    }
  });
  it('lets reads through, and the admin key (not a cookie a form could send) without the header', () => {
    expect(csrf({ ...adminRequest({}, 'GET'), who: session as never })).toBeNull();
    expect(csrf({ ...adminRequest({}, 'POST'), who: PRINCIPALS.cliViaService })).toBeNull();
  });
});
