import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { sendJson } from '../../main/lib/http/send.ts';
import type { RouteAnswer } from './routes.ts';

/** A route's answer: JSON, a text, or a file streamed with its length. */
export async function sendAnswer(res: ServerResponse, status: number, a: RouteAnswer): Promise<void> {
  if (!a.raw) return sendJson(res, status, a.body, a.headers);
  const base = {
    'Content-Type': a.raw.contentType,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...a.headers,
  };
  if (a.raw.file) {
    res.writeHead(status, {
      ...base,
      'Content-Length': String(a.raw.file.size),
      'Content-Disposition': `attachment; filename="${a.raw.file.name}"`,
    });
    // A client that goes away mid-download ends the pipeline; nothing to answer then.
    await pipeline(a.raw.file.stream(), res).catch(() => res.destroy());
    return;
  }
  const text = a.raw.text ?? '';
  res.writeHead(status, { ...base, 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}
