import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { newRequest, type CloudRequest, type Entry } from '../../../../cloud/http/cloud-request.ts';

/** A request as the cloud guards see it: a readable body, headers, a peer address, and an answer that collects headers. */
export function cloudRequest(
  o: {
    method?: string;
    url?: string;
    headers?: Record<string, string>;
    body?: string;
    remoteAddress?: string;
    entry?: Partial<Entry>;
  } = {},
): CloudRequest & { answerHeaders: Record<string, string> } {
  const stream = new PassThrough();
  const req = Object.assign(stream, {
    method: o.method ?? 'GET',
    url: o.url ?? '/',
    headers: o.headers ?? {},
    socket: { remoteAddress: o.remoteAddress ?? '127.0.0.1' },
  }) as unknown as IncomingMessage;
  stream.end(o.body ?? '');
  const answerHeaders: Record<string, string> = {};
  const res = {
    setHeader: (k: string, v: string) => void (answerHeaders[k.toLowerCase()] = String(v)),
    getHeader: (k: string) => answerHeaders[k.toLowerCase()],
  } as unknown as ServerResponse;
  const c = newRequest(req, res);
  if (o.entry)
    c.entry = {
      name: 'x',
      template: 'x',
      auth: 'none',
      maxBody: 1024,
      handler: async () => ({}),
      watchClose: false,
      ...o.entry,
    };
  return Object.assign(c, { answerHeaders });
}
