import { request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { readBody } from '../main/lib/http/body.ts';
import { parseJson } from '../main/lib/http/json.ts';
import { createEdgeServer } from '../main/lib/http/server.ts';
import { sendJson } from '../main/lib/http/send.ts';
import { HttpError } from '../main/lib/http/http-error.ts';
import { CloudError } from './errors.ts';
import type { Ctx } from './services/context.ts';
import { runOperator } from './services/operator.ts';

/**
 * Operator commands while `serve` holds the embedded database: the service
 * listens on a unix socket in its data dir (0700), and the CLI sends
 * `{command, args}` with the token from runtime.json (0600). Answers
 * `{ok: true, data}` or `{ok: false, code, message}` like the app's admin API.
 */
export async function listenOperatorSocket(ctx: Ctx, socketPath: string, token: string): Promise<Server> {
  const expected = Buffer.from(token);
  const server = createEdgeServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      try {
        const sent = Buffer.from(String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
        if (
          req.method !== 'POST' ||
          req.url !== '/operator' ||
          sent.length !== expected.length ||
          !timingSafeEqual(sent, expected)
        ) {
          return sendJson(res, 403, { ok: false, code: 'forbidden', message: 'operator socket: wrong token or path' });
        }
        const body = parseJson(await readBody(req, { limit: 64 * 1024 })) as { command?: unknown; args?: unknown };
        const data = await runOperator(ctx, String(body?.command ?? ''), body?.args);
        sendJson(res, 200, { ok: true, data });
      } catch (e) {
        if (e instanceof CloudError || e instanceof HttpError)
          return sendJson(res, e.status, {
            ok: false,
            code: e.code,
            message: e.message,
            details: e instanceof CloudError ? e.details : {},
          });
        ctx.log.error('operator command failed', { error: (e as Error).message });
        sendJson(res, 500, { ok: false, code: 'internal_error', message: 'internal error: see the service log' });
      }
    })();
  });
  await unlink(socketPath).catch(() => {});
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, () => resolve()));
  return server;
}

export function callOperatorSocket(
  socketPath: string,
  token: string,
  command: string,
  args: unknown,
): Promise<unknown> {
  const payload = JSON.stringify({ command, args });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: '/operator',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res
          .on('data', (c: Buffer) => chunks.push(c))
          .on('end', () => {
            try {
              const out = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
                ok: boolean;
                data?: unknown;
                code?: string;
                message?: string;
                details?: Record<string, unknown>;
              };
              if (out.ok) resolve(out.data);
              else
                reject(
                  new CloudError(
                    (out.code ?? 'internal_error') as CloudError['code'],
                    out.message ?? 'operator command failed',
                    out.details ?? {},
                  ),
                );
            } catch (e) {
              reject(e);
            }
          });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
