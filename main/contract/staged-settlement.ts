import type { StagedPayload } from './staged.ts';

// Without the staged schemas: `gatehouse staged list` marks the writes to settle with it, and a command sent to a
// running service loads no schema (main/cli/admin-client.ts).

/** The error codes of a failed write whose effect nobody knows: only these can be settled. */
export const UNKNOWN_OUTCOME_CODES: readonly string[] = ['outcome_unknown', 'apply_interrupted'];

/** Whether a person can still settle this write: failed with an unknown outcome, not settled yet. */
export const awaitsSettlement = (s: Pick<StagedPayload, 'status' | 'error_code' | 'settlement'>): boolean =>
  s.status === 'failed' && !s.settlement && s.error_code !== null && UNKNOWN_OUTCOME_CODES.includes(s.error_code);
