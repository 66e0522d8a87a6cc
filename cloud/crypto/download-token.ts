import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * Short-lived download tokens for release files and the electron-updater
 * feed (a path segment, since the updater cannot sign its requests). The
 * token names the site, product and channel and when it stops working, and
 * is HMAC-SHA256-signed with a key derived from the master key, so any
 * instance checks it without a database row. It grants nothing on its own:
 * each use re-checks the site's license and channel in the database.
 */
export const DownloadGrant = z.strictObject({
  v: z.literal(1),
  /** site id */
  s: z.string().max(64),
  /** product */
  p: z.string().max(32),
  /** channel */
  c: z.string().max(32),
  /** expiry, unix seconds */
  x: z.number().int(),
});
export type DownloadGrant = z.infer<typeof DownloadGrant>;

const TOKEN = /^([A-Za-z0-9_-]{10,400})\.([A-Za-z0-9_-]{43})$/;

export function mintDownloadToken(key: Buffer, g: DownloadGrant): string {
  const body = Buffer.from(JSON.stringify(DownloadGrant.parse(g))).toString('base64url');
  return `${body}.${mac(key, body)}`;
}

export type TokenCheck =
  { ok: true; grant: DownloadGrant } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

export function openDownloadToken(key: Buffer, token: string, nowSeconds: number): TokenCheck {
  const m = TOKEN.exec(token);
  if (!m) return { ok: false, reason: 'malformed' };
  const want = Buffer.from(mac(key, m[1]!));
  const got = Buffer.from(m[2]!);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'bad_signature' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const g = DownloadGrant.safeParse(parsed);
  if (!g.success) return { ok: false, reason: 'malformed' };
  if (g.data.x <= nowSeconds) return { ok: false, reason: 'expired' };
  return { ok: true, grant: g.data };
}

const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest('base64url');
