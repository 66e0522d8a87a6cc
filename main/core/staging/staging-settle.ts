import { NOT_APPLIED_CODE, type SettleOutcome, type StagedPayload } from '../../contract/staged.ts';
import { awaitsSettlement } from '../../contract/staged-settlement.ts';
import type { PersonPrincipal } from '../../contract/principal.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Auditor } from '../calls/auditor.ts';
import type { StagingLedger } from './staging-ledger.ts';
import { GatehouseError } from '../errors.ts';
import { clientText } from '../calls/client-text.ts';

export interface SettleDeps {
  ledger: StagingLedger;
  auditor: Auditor;
  clock: Clock;
}

/**
 * A person's word on a write whose outcome is unknown (failed with
 * `outcome_unknown` or `apply_interrupted`): they checked the other side and
 * say it was applied (the write becomes `confirmed`, with no result: the
 * upstream's answer never arrived) or it was not (`failed`, `not_applied`).
 * Nothing is sent to the upstream: settling only records what the person
 * found. Run inside the ledger's exclusive section for the write.
 *
 * The audit entry is made durable before the record changes: killed between
 * the two, the audit holds the person's word and the write still awaits
 * settling (settling it again adds a second entry), never the other way round.
 */
export async function settleUnknown(
  deps: SettleDeps,
  id: string,
  outcome: SettleOutcome,
  by: { principal: PersonPrincipal; request_id?: string | null },
): Promise<StagedPayload> {
  const item = deps.ledger.index.get(id);
  // The id came from a person's request: quoted back without control characters.
  if (!item) throw new GatehouseError('staged_not_found', `no staged write '${clientText(id, 80)}'`);
  if (item.settlement)
    throw new GatehouseError(
      'staged_already_decided',
      `staged write '${id}' was already settled: ${item.settlement.outcome === 'applied' ? 'it was applied' : 'it was not applied'} (${item.settlement.at})`,
    );
  if (!awaitsSettlement(item)) {
    throw new GatehouseError(
      'conflict',
      `only a write whose outcome is unknown can be settled; '${id}' is ${item.status}${item.error_code ? ` (${item.error_code})` : ''}${item.status === 'pending' ? ': confirm or discard it' : ''}`,
    );
  }
  const started = deps.clock.now();
  const settlement = { outcome, was: item.error_code!, by: by.principal, at: new Date(started).toISOString() };
  const applied = outcome === 'applied';
  deps.ledger.audit(
    item,
    applied ? 'confirmed' : 'error',
    { principal: by.principal, user_id: item.user_id, request_id: by.request_id ?? null },
    applied ? {} : { error_code: NOT_APPLIED_CODE },
  );
  await deps.auditor.durable();
  // `undefined` as the decider keeps who confirmed it (and when); the settlement says who settled it.
  return deps.ledger.finish(item, applied ? 'confirmed' : 'failed', undefined, {
    error_code: applied ? null : NOT_APPLIED_CODE,
    settlement,
  });
}
