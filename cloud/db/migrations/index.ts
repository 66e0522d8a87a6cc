import * as m001 from './001-ledger.ts';
import * as m002 from './002-hot-path-functions.ts';
import * as m003 from './003-ai-policies-releases.ts';
import * as m004 from './004-reservation-retention.ts';
import * as m005 from './005-certificate-order.ts';
import * as m006 from './006-one-lock-order.ts';
import * as m007 from './007-policy-layers-staging.ts';
import * as m008 from './008-upstreams-free.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every migration, in order. Append only. */
export const MIGRATIONS: readonly Migration[] = [m001, m002, m003, m004, m005, m006, m007, m008];
