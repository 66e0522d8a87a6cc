import { describe, expect, it } from 'vitest';
import { ownOrigin } from '../../../main/rest/guards/own-origin.ts';
import { adminRequest } from './request.ts';

describe('ownOrigin', () => {
  const guard = ownOrigin(() => 'http://127.0.0.1:7823');
  it('passes a request without Origin (a non-browser client) and one from the console itself', () => {
    expect(guard(adminRequest())).toBeNull();
    expect(guard(adminRequest({ origin: 'http://127.0.0.1:7823' }))).toBeNull();
  });
  it('refuses another origin, another port of the same host included, and "null"', () => {
    for (const origin of ['http://127.0.0.1:3000', 'http://localhost:7823', 'null', 'https://evil.example']) {
      expect(guard(adminRequest({ origin })), origin).toMatchObject({ code: 'forbidden', status: 403 });
    }
  });
});
