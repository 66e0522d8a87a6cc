import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../../../cloud/http/guards/authenticate.ts';
import { HEADER_PLAN } from '../../../../main/contract/cloud/index.ts';
import type { SiteClient } from '../../helpers/client.ts';
import { licensedSite } from '../../helpers/licensed.ts';
import { startHarness, type Harness } from '../../helpers/cloud-harness.ts';
import { signHeaders } from '../../helpers/sign.ts';
import { cloudRequest } from './request.ts';

/** The guard against the real ledger: a real site's signature, the account key check, and routes that need neither. */
let h: Harness;
let site: SiteClient;
beforeAll(async () => {
  h = await startHarness();
  site = await licensedSite(h);
}, 180_000);
afterAll(() => h?.stop());

function signed(body: string, tamper = false) {
  const url = `${h.gateway}/usage/limits`;
  const headers = signHeaders(site.creds, { method: 'POST', url, body });
  const c = cloudRequest({
    method: 'POST',
    url: new URL(url).pathname,
    headers: {
      ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
      host: new URL(url).host,
    },
    entry: { auth: 'site' },
  });
  c.raw = Buffer.from(tamper ? `${body} ` : body);
  return c;
}

describe('authenticate (cloud)', () => {
  it('names the site of a valid signature and puts its plan on the answer', async () => {
    const c = signed('{}');
    await authenticate(h.svc.ctx)(c);
    expect(c.site?.id).toBe(site.creds.site_id);
    expect(c.answerHeaders[HEADER_PLAN]).toBe('pro');
  });
  it('refuses a body that is not the one signed, and a request with no signature', async () => {
    await expect(authenticate(h.svc.ctx)(signed('{}', true))).rejects.toMatchObject({ code: 'signature_invalid' });
    await expect(
      authenticate(h.svc.ctx)(
        cloudRequest({
          method: 'POST',
          url: '/gateway/v1/usage/limits',
          headers: { host: 'x' },
          entry: { auth: 'site' },
        }),
      ),
    ).rejects.toMatchObject({ code: 'signature_invalid' });
  });
  it('needs an account key on account routes and nothing on open ones', async () => {
    await expect(authenticate(h.svc.ctx)(cloudRequest({ entry: { auth: 'account' } }))).rejects.toMatchObject({
      code: 'unauthorized',
    });
    const open = cloudRequest({ entry: { auth: 'none' } });
    await authenticate(h.svc.ctx)(open);
    expect([open.site, open.account]).toEqual([null, null]);
  });
});
