import { createHmac } from 'node:crypto';
import type { StagedPayload } from '../../contract/staged.ts';
import { APPROVAL_ROUTE, type ApprovalView } from '../../contract/approval-link.ts';
import type { Staging } from './staging.ts';
import { GatehouseError } from '../errors.ts';

/** Links remembered at once (link -> staged id); past it a lookup scans the staged writes again. */
const REMEMBERED = 2000;

/**
 * Approval links (docs/tasks.md): one link per staged write, to a console
 * page that shows only that write. The link's id is the HMAC of the write's
 * id under a key derived from the service's admin key, so it is unguessable,
 * needs no storage (the same link after a restart), and carries nothing that
 * lets anyone approve: the page and its actions need a person's console
 * session. A link serves its write while it waits for a decision; once it
 * is decided or expired the link answers `approval_link_gone`.
 */
export class ApprovalLinks {
  private key: Buffer | null = null;
  private readonly known = new Map<string, string>();

  constructor(
    private readonly staging: Pick<Staging, 'list' | 'get' | 'blockNow'>,
    private readonly consoleUrl: () => string | null,
  ) {}

  /** Set by the service once its admin key is loaded; without one (a CLI on the data dir) no link is made. */
  useKey(key: Buffer): void {
    this.key = key;
    this.known.clear();
  }

  /** The link id of a staged write, or null when no service holds the key. */
  idFor(stagedId: string): string | null {
    if (!this.key) return null;
    const id = createHmac('sha256', this.key).update(`approval-link\0${stagedId}`).digest('base64url');
    if (this.known.size >= REMEMBERED) this.known.delete(this.known.keys().next().value!);
    this.known.set(id, stagedId);
    return id;
  }

  /** The page's address for a staged write, or null while no service listens. */
  urlFor(stagedId: string): string | null {
    const base = this.consoleUrl();
    const id = base ? this.idFor(stagedId) : null;
    return base && id ? `${base}#${APPROVAL_ROUTE}/${id}` : null;
  }

  /** The write a link names while it waits for a decision; `approval_link_gone` after, `not_found` for a link that never was. */
  pending(link: string): StagedPayload {
    const item = this.find(link);
    if (item.status !== 'pending') {
      throw new GatehouseError(
        'approval_link_gone',
        `this approval link is no longer valid: the write was ${item.status === 'expired' ? 'not decided in time (expired)' : item.status}`,
        { status: item.status },
      );
    }
    return item;
  }

  async view(link: string, item: StagedPayload): Promise<ApprovalView> {
    const blocked = await this.staging.blockNow(item);
    return {
      link,
      staged_id: item.id,
      tool: item.tool,
      summary: item.preview.summary,
      preview: item.preview,
      target: item.target,
      client: item.client,
      token_label: item.token_label,
      created: item.created,
      expires_at: item.expires_at,
      status: item.status,
      preview_hash: item.preview_hash ?? null,
      blocked: blocked?.block ?? null,
      blocked_reason: blocked?.reason ?? null,
    };
  }

  private find(link: string): StagedPayload {
    if (!this.key)
      throw new GatehouseError(
        'service_unavailable',
        'approval links are served by the running service (gatehouse serve)',
      );
    const remembered = this.known.get(link);
    if (remembered) {
      try {
        return this.staging.get(remembered);
      } catch {
        // pruned from the history since: the link died with its write
        throw new GatehouseError('approval_link_gone', 'this approval link is no longer valid: its write is gone');
      }
    }
    for (const item of this.staging.list()) {
      if (this.idFor(item.id) === link) return this.staging.get(item.id);
    }
    throw new GatehouseError('not_found', 'no write has this approval link');
  }
}
