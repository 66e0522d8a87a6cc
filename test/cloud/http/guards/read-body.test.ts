import { describe, expect, it } from 'vitest';
import { readRequestBody } from '../../../../cloud/http/guards/read-body.ts';
import { cloudRequest } from './request.ts';

describe('readRequestBody', () => {
  it("reads the raw bytes within the route's bound", async () => {
    const c = cloudRequest({ method: 'POST', body: '{"a":1}', entry: { maxBody: 100 } });
    await readRequestBody()(c);
    expect(c.raw.toString()).toBe('{"a":1}');
  });
  it('refuses a body over the bound with 413, declared or not', async () => {
    await expect(
      readRequestBody()(cloudRequest({ method: 'POST', body: 'x'.repeat(101), entry: { maxBody: 100 } })),
    ).rejects.toMatchObject({ code: 'payload_too_large', status: 413 });
    await expect(
      readRequestBody()(
        cloudRequest({ method: 'POST', headers: { 'content-length': '5000' }, entry: { maxBody: 100 } }),
      ),
    ).rejects.toMatchObject({ code: 'payload_too_large' });
  });
});
