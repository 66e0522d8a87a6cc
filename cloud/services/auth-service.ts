import { INVALID_SITE_DISCONNECTED_STATUS, SIGNATURE_WINDOW_SECONDS } from '../../main/contract/cloud/index.ts';
import { parseSignature, verifyContentDigest, verifyMac, type RequestTarget } from '../crypto/request-signature.ts';
import { CloudError } from '../errors.ts';
import { claimNonce } from '../repo/nonces-repo.ts';
import { siteWithGrantsByKeyId, type SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';

export interface SignedRequest extends RequestTarget {
  headers: Record<string, string | string[] | undefined>;
  /** the raw body bytes, before any parsing */
  body: Buffer;
}

const secretContext = (siteId: string) => `site-secret:${siteId}`;
export const sealSiteSecret = (ctx: Pick<Ctx, 'box'>, siteId: string, secret: string) => ctx.box.seal(secret, secretContext(siteId));

/**
 * Verifies a signed request exactly as DESIGN.md says and answers the site.
 * Order: headers well-formed, key id known, site connected, digest over the
 * raw body, HMAC over the base, time window, then the nonce (claimed last, so
 * forged requests cannot fill the nonce table). The site row is read on every
 * request, so a disconnect on any instance stops the key at once; only the
 * decrypted secret is kept, keyed by its ciphertext.
 */
export class Authenticator {
  private readonly secrets = new Map<string, { enc: string; secret: Buffer }>();
  constructor(private readonly ctx: Ctx) {}

  async verify(req: SignedRequest): Promise<SiteRow> {
    const sig = parseSignature(req.headers);
    const site = await siteWithGrantsByKeyId(this.ctx.db, sig.keyid);
    if (!site) throw new CloudError('invalid_site', 'the key id is not known to this gateway: register the site again (sites/register)');
    if (site.status !== 'active' || !site.secret_enc) {
      throw new CloudError('invalid_site', 'this site was disconnected: register it again to get a new key', { site_id: site.id }, { status: INVALID_SITE_DISCONNECTED_STATUS });
    }
    verifyContentDigest(sig.contentDigest, req.body);
    verifyMac(sig, req, this.secretOf(site));
    const now = this.ctx.now();
    const skew = sig.created - Math.floor(now.getTime() / 1000);
    if (Math.abs(skew) > SIGNATURE_WINDOW_SECONDS) {
      throw new CloudError('token_expired', `the signature's created time is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the gateway's clock (window ±${SIGNATURE_WINDOW_SECONDS} s): re-sync the clock offset from server_time and sign again`, {
        server_time: now.toISOString(),
      });
    }
    if (!(await claimNonce(this.ctx.db, sig.keyid, sig.nonce, now))) throw new CloudError('signature_invalid', 'this nonce was already used: every request needs a fresh nonce');
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
