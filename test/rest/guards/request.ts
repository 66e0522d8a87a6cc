import type { IncomingMessage } from 'node:http';
import type { AdminRequest } from '../../../main/rest/guards/admin-request.ts';

/** The parts of a request the admin guards read. */
export const adminRequest = (
  headers: Record<string, string> = {},
  method = 'GET',
  remoteAddress = '127.0.0.1',
): AdminRequest => ({
  req: { headers, method, socket: { remoteAddress } } as unknown as IncomingMessage,
  who: null,
});
