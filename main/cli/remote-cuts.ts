import type { Result } from '../contract/errors.ts';
import { statusCode } from '../contract/action-request.ts';
import { RunElsewhere } from './run-elsewhere.ts';

/**
 * What dist/cli/remote.cjs has in place of the two modules that would bring the rest of Gatehouse into it
 * (main/cli/build.ts swaps them in). Each keeps its module's export.
 */

/** In place of main/cli/direct-connection.ts; not reached: connect hands a command over when no service runs. */
export function direct(): never {
  throw new RunElsewhere();
}

/**
 * In place of main/contract/action-http.ts, which checks answers against the contract's schemas. Here the service is
 * of this version (main/cli/connect.ts hands any other over), and main/cli/admin-client.ts takes its answers in the
 * admin API's envelope as they are: what is asked here is a body that is not one (a crash, something else on the
 * port), which gets the full check's own answer to such a body.
 */
export function decodeActionAnswer(_action: string, status: number): Result<unknown> {
  return { ok: false, code: statusCode(status), message: `The service answered ${status} with an unexpected body.` };
}
