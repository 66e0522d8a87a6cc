import { Certificate, CertificatePayload, type Jwks } from '../../main/contract/cloud/index.ts';
import type { Db } from '../db/db.ts';
import type { SecretBox } from '../crypto/master-key.ts';
import { generateSigningKey, Signer, toJwk } from '../crypto/signing-keys.ts';
import { activeKey, insertActiveKey, publishedKeys, retireActiveKey } from '../repo/keys-repo.ts';

const context = (kid: string) => `signing-key:${kid}`;

/**
 * The gateway's Ed25519 keys: the active one signs, retired ones stay in the
 * JWKS until their certificates expire. The active kid is read from the
 * database on every signature, so a rotation on one instance is followed by
 * all; decrypted keys are kept in memory per kid.
 */
export class KeyRing {
  private readonly signers = new Map<string, Signer>();
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  /** Makes the first key when there is none (several instances starting at once make one between them). */
  async ensureKey(now: Date): Promise<void> {
    if (await activeKey(this.db)) return;
    const k = generateSigningKey();
    await insertActiveKey(
      this.db,
      { kid: k.kid, public_x: k.x, private_enc: this.box.seal(k.privateDer, context(k.kid)) },
      now,
    );
  }

  /** `keys rotate`: a new active key in the same transaction that retires the old one. */
  async rotate(now: Date): Promise<{ retired: string | null; active: string }> {
    const k = generateSigningKey();
    return this.db.transaction(async (tx) => {
      const retired = await retireActiveKey(tx, now);
      await insertActiveKey(
        tx,
        { kid: k.kid, public_x: k.x, private_enc: this.box.seal(k.privateDer, context(k.kid)) },
        now,
      );
      return { retired, active: k.kid };
    });
  }

  async jwks(now: Date): Promise<Jwks> {
    return { keys: (await publishedKeys(this.db, now)).map((k) => toJwk(k.kid, k.public_x)) };
  }

  /** Signs the exact JSON bytes of the payload. */
  async certify(payload: CertificatePayload): Promise<Certificate> {
    const bytes = Buffer.from(JSON.stringify(CertificatePayload.parse(payload)));
    const { sig, kid } = await this.signBytes(bytes);
    return Certificate.parse({ payload: bytes.toString('base64url'), sig, alg: 'ed25519', kid });
  }

  /** Signs bytes with the active key (certificates, release manifests): base64url signature and the key's id. */
  async signBytes(bytes: Buffer): Promise<{ sig: string; kid: string }> {
    const row = await activeKey(this.db);
    if (!row) throw new Error('no active signing key: the service did not start properly');
    let signer = this.signers.get(row.kid);
    if (!signer) {
      signer = new Signer(row.kid, this.box.open(row.private_enc, context(row.kid)));
      this.signers.set(row.kid, signer);
    }
    return { sig: signer.sign(bytes), kid: row.kid };
  }

  /** The published public keys ({kid, x}), to verify what the gateway signed. */
  async verifyKeys(now: Date): Promise<Array<{ kid: string; x: string }>> {
    return (await publishedKeys(this.db, now)).map((k) => ({ kid: k.kid, x: k.public_x }));
  }
}
