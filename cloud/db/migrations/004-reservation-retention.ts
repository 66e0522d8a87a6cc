/**
 * Version 4: closed reservations (settled or released) are pruned by
 * housekeeping a day after they close (an AI generation's hold is needed only
 * while it runs, and a late settlement comes within its deadline). The partial
 * index lets the prune find them without scanning the held ones.
 */
export const version = 4;
export const name = 'reservation-retention';
export const sql = `
CREATE INDEX usage_reservations_closed ON usage_reservations (closed_at) WHERE status <> 'held';
`;
