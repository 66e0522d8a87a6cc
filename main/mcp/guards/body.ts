import type { IncomingMessage } from 'node:http';
import { fail, type HttpFailure } from '../http-failure.ts';

export const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

/** Reads the body up to `max` bytes; a larger one is refused without buffering it. */
export async function readBody(req: IncomingMessage, max: number): Promise<Buffer | HttpFailure> {
  const tooLarge = () => fail('payload_too_large', `request body over ${Math.round(max / 1024 / 1024)} MiB`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      req.resume();
      return tooLarge();
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

export function parseJson(body: Buffer): unknown | HttpFailure {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return fail('parse_error', 'request body is not valid JSON');
  }
}

