import { describe, expect, it } from 'vitest';
import { fetchSite } from '../../../main/rest/guards/fetch-site.ts';
import { adminRequest } from './request.ts';

describe('fetchSite', () => {
  it("passes the console's own pages, a user's navigation and non-browser clients", () => {
    for (const site of ['same-origin', 'none', undefined])
      expect(fetchSite(adminRequest(site ? { 'sec-fetch-site': site } : {})), String(site)).toBeNull();
  });
  it('refuses same-site (another local port carries the cookie) and cross-site', () => {
    for (const site of ['same-site', 'cross-site'])
      expect(fetchSite(adminRequest({ 'sec-fetch-site': site }))).toMatchObject({
        code: 'forbidden',
        message: expect.stringContaining(site),
      });
  });
});
