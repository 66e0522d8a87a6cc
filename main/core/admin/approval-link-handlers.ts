import type { Principal } from '../../contract/principal.ts';
import type { ActionDeps, Handler, InvokeMeta } from './action-types.ts';
import type { Decider } from '../staging/staging-parts.ts';
import { GatehouseError } from '../errors.ts';

type LinkAction = 'approval.get' | 'approval.confirm' | 'approval.discard';

/**
 * The actions of an approval link's page: each resolves the link to its one
 * write (refused once decided or expired) and acts on that write only, as
 * the person whose console session calls (invoke let only people through).
 */
export function createApprovalLinkHandlers(
  deps: Pick<ActionDeps, 'approvalLinks' | 'staging'>,
  person: (p: Principal, meta: InvokeMeta) => Extract<Decider, { kind: 'person' }>,
): { [A in LinkAction]: Handler<A> } {
  const links = () => {
    if (!deps.approvalLinks)
      throw new GatehouseError(
        'service_unavailable',
        'approval links are served by the running service (gatehouse serve)',
      );
    return deps.approvalLinks;
  };
  return {
    'approval.get': async ({ link }) => links().view(link, links().pending(link)),
    'approval.confirm': async ({ link, preview_hash }, p, meta) =>
      links().view(
        link,
        await deps.staging.confirm(links().pending(link).id, {
          ...person(p, meta),
          preview_hash: preview_hash ?? null,
        }),
      ),
    'approval.discard': async ({ link }, p, meta) =>
      links().view(link, await deps.staging.discard(links().pending(link).id, person(p, meta))),
  };
}
