import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.ts';

export const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

/**
 * A memory budget shared by every body being read at once. Each body's first
 * `freeBytes` are not counted, so small requests never wait on large ones;
 * past that, a body reserves what it buffers and releases it when read or
 * refused. With a connection cap this bounds what stalled uploads can hold:
 * connections x freeBytes + maxBytes (100 stalled 4 MiB bodies took
 * 400 MiB before).
 */
export class BodyBudget {
  private used = 0;

  constructor(
    readonly maxBytes = 16 * 1024 * 1024,
    readonly freeBytes = 64 * 1024,
  ) {}

  get inUse(): number {
    return this.used;
  }

  /** Takes `n` bytes of the budget; false (nothing taken) when it is spent. */
  take(n: number): boolean {
    if (this.used + n > this.maxBytes) return false;
    this.used += n;
    return true;
  }

  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}

export interface ReadBodyOptions {
  /** the largest body accepted (413 above it); default 4 MiB */
  limit?: number;
  budget?: BodyBudget;
}

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

/**
 * Reads the whole body up to `limit` bytes. A declared or actual size over the
 * limit is refused (413) without buffering the rest; a spent budget answers
 * 503 with Retry-After. Both refusals close the connection after the answer
 * (`Connection: close`): the rest of the upload is discarded, not read into
 * memory, and a client that keeps sending is cut when the answer is out.
 * A body cut off by the client rejects with the stream's error.
 */
export function readBody(req: IncomingMessage, opts: ReadBodyOptions = {}): Promise<Buffer> {
  const limit = opts.limit ?? DEFAULT_MAX_BODY;
  const budget = opts.budget;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(refuse(req, tooLarge(limit)));
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (req.destroyed) return Promise.reject(new Error('the request was closed before its body was read'));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let reserved = 0;
    const finish = (err: Error | null) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      budget?.give(reserved);
      reserved = 0;
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish(refuse(req, tooLarge(limit)));
      if (budget) {
        const need = Math.max(0, size - budget.freeBytes) - reserved;
        if (need > 0) {
          if (!budget.take(need))
            return finish(
              refuse(
                req,
                new HttpError(
                  'service_unavailable',
                  'too many large requests are being received at once: retry shortly',
                  { headers: { 'Retry-After': '1', Connection: 'close' } },
                ),
              ),
            );
          reserved += need;
        }
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(null);
    const onError = (e: Error) => finish(e);
    const onClose = () => finish(new Error('the client closed the connection before the body was complete'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

const tooLarge = (limit: number) =>
  new HttpError('payload_too_large', `request body over ${mib(limit)}`, { headers: { Connection: 'close' } });

/** Discards the rest of a refused body so the refusal can be answered. */
function refuse(req: IncomingMessage, err: HttpError): HttpError {
  req.resume();
  return err;
}
