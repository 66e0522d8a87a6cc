import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../contract/principal.ts';

/** A request to the admin API or the local REST on its way through the guards; `who` is set once authenticated. */
export interface AdminRequest {
  req: IncomingMessage;
  who: Principal | null;
}
