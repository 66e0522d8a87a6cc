import {
  CLOUD_BASE_PATH,
  CLOUD_ENDPOINTS,
  CLOUD_AI_UPDATES_ENDPOINTS,
  INVALID_SITE_DISCONNECTED_STATUS,
  NONCE_TTL_SECONDS,
  SIGNATURE_WINDOW_SECONDS,
} from '../../main/contract/cloud/index.ts';
import { parseSignature, verifyContentDigest, verifyMac, type RequestTarget } from '../crypto/request-signature.ts';
import { CloudError } from '../errors.ts';
import { listPlans } from '../repo/catalog-repo.ts';
import { sqlState } from '../db/db.ts';
import { authenticateKey, type DeferredNonce, type NonceClaim, type SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';

export interface SignedRequest extends RequestTarget {
  headers: Record<string, string | string[] | undefined>;
  /** the raw body bytes, before any parsing */
  body: Buffer;
}

const secretContext = (siteId: string) => `site-secret:${siteId}`;
export const sealSiteSecret = (ctx: Pick<Ctx, 'box'>, siteId: string, secret: string) =>
  ctx.box.seal(secret, secretContext(siteId));

/**
 * Until when a nonce claimed now is kept. The window compares whole seconds,
 * so a created time accepted now (at most 300 s ahead) stays inside it to the
 * end of the second 600 s from now: the nonce is held that long, not 600 s
 * from this millisecond (a capture replayed in that last second passed).
 */
export const nonceExpiry = (now: Date): Date =>
  new Date((Math.floor(now.getTime() / 1000) + NONCE_TTL_SECONDS + 1) * 1000);

const replayed = () =>
  new CloudError('signature_invalid', 'this nonce was already used: every request needs a fresh nonce');
const pathOf = (e: { path: string }) => `${CLOUD_BASE_PATH}/${e.path}`;
/** Routes that claim the nonce in their own statement, together with what they do (one commit instead of two). */
const DEFERRED = new Set([pathOf(CLOUD_AI_UPDATES_ENDPOINTS.aiGenerate), pathOf(CLOUD_ENDPOINTS.usageRecord)]);
/** POST routes that change nothing: their nonce need not wait for a durable commit (docs/decisions.md). */
const READ_ONLY_POSTS = new Set([
  pathOf(CLOUD_ENDPOINTS.entitlementsCheck),
  pathOf(CLOUD_AI_UPDATES_ENDPOINTS.aiRoute),
]);

/** How a request's nonce is claimed, by its route. */
export function nonceClaimFor(method: string, url: string): NonceClaim {
  const path = url.split('?')[0]!;
  if (method === 'POST' && DEFERRED.has(path)) return 'deferred';
  return method === 'GET' || (method === 'POST' && READ_ONLY_POSTS.has(path)) ? 'relaxed' : 'durable';
}

/**
 * Claims a deferred nonce on a route's way out when its own statement did
 * not (it refused before acting): a replay of the request is then refused
 * like any replay, and can never act later.
 */
export async function claimDeferredNonce(ctx: Pick<Ctx, 'db' | 'now'>, site: SiteRow): Promise<void> {
  const n = site.nonce;
  if (!n || n.claimed) return;
  const r = await ctx.db.query<{ fresh: boolean }>('SELECT gatehouse_claim_nonce($1, $2, $3, $4) AS fresh', [
    n.key_id,
    n.nonce,
    n.expires,
    ctx.now(),
  ]);
  n.claimed = true;
  if (!r.rows[0]?.fresh) throw replayed();
}

/** What gatehouse_hold and gatehouse_record raise when the request's nonce was seen before. */
const REPLAY_SQLSTATE = 'GH002';

/** A replayed nonce found by a function that claims it: the same refusal as at authentication. */
export function replayError(e: unknown): unknown {
  return sqlState(e) === REPLAY_SQLSTATE ? replayed() : e;
}

/** The nonce parameters of gatehouse_hold and gatehouse_record: nulls when the nonce is claimed already. */
export const nonceParams = (n: DeferredNonce | null): unknown[] =>
  n ? [n.key_id, n.nonce, n.expires] : [null, null, null];

/**
 * Verifies a signed request exactly as docs/cloud-gateway.md "Request signing" says and answers the site.
 * Order of refusals: headers well-formed, key id known, site connected,
 * digest over the raw body, HMAC over the base, time window, nonce not seen.
 * The database side is one round trip that reads the site and claims the
 * nonce together (only for a known, connected key: a forger must know a key
 * id, and can only spend nonces the real site will never draw); for
 * ai/generate and usage/record the route's own statement claims it
 * (site.nonce), for read-only routes without waiting for a durable commit. The site row
 * is read on every request, so a disconnect on any instance stops the key at
 * once; only the decrypted secret is kept, keyed by its ciphertext.
 */
export class Authenticator {
  private readonly secrets = new Map<string, { enc: string; secret: Buffer }>();
  constructor(private readonly ctx: Ctx) {}

  async verify(req: SignedRequest): Promise<SiteRow> {
    const sig = parseSignature(req.headers);
    const now = this.ctx.now();
    const site = await authenticateKey(
      this.ctx.db,
      sig.keyid,
      sig.nonce,
      nonceExpiry(now),
      now,
      async (id, version) =>
        (await this.ctx.cache.get('plans', version, () => listPlans(this.ctx.db))).find((p) => p.id === id) ?? null,
      nonceClaimFor(req.method, req.url),
    );
    if (!site)
      throw new CloudError(
        'invalid_site',
        'the key id is not known to this gateway: register the site again (sites/register)',
      );
    if (site.status !== 'active' || !site.secret_enc) {
      throw new CloudError(
        'invalid_site',
        'this site was disconnected: register it again to get a new key',
        { site_id: site.id },
        { status: INVALID_SITE_DISCONNECTED_STATUS },
      );
    }
    verifyContentDigest(sig.contentDigest, req.body);
    verifyMac(sig, req, this.secretOf(site));
    const skew = sig.created - Math.floor(now.getTime() / 1000);
    if (Math.abs(skew) > SIGNATURE_WINDOW_SECONDS) {
      throw new CloudError(
        'token_expired',
        `the signature's created time is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the gateway's clock (window ±${SIGNATURE_WINDOW_SECONDS} s): re-sync the clock offset from server_time and sign again`,
        {
          server_time: now.toISOString(),
        },
      );
    }
    if (!site.nonce_fresh) throw replayed();
    return site;
  }

  private secretOf(site: SiteRow): Buffer {
    const hit = this.secrets.get(site.key_id);
    if (hit && hit.enc === site.secret_enc) return hit.secret;
    const secret = this.ctx.box.open(site.secret_enc!, secretContext(site.id));
    if (this.secrets.size > 10_000) this.secrets.clear();
    this.secrets.set(site.key_id, { enc: site.secret_enc!, secret });
    return secret;
  }
}
