import type { Result } from '../contract/errors.ts';
import { statusCode } from '../contract/action-request.ts';
import { RunElsewhere } from './run-elsewhere.ts';

/**
 * What dist/cli/remote.cjs has in place of the two modules that would bring the rest of Gatehouse into it
 * (main/cli/build.ts swaps them in). Each keeps its module's export.
 */

/** In place of main/cli/direct-connection.ts: no service runs (it stopped as the command started), so the ES module bundle runs the command. */
export function direct(): never {
  throw new RunElsewhere();
}

/**
 * In place of main/contract/action-http.ts, which checks answers against the contract's schemas. Here it is asked
 * only about an answer that is not in the admin API's envelope (main/cli/admin-client.ts takes those of a service
 * of this version as they are), or one from a service of another version: remote-main runs a command only when the
 * service is of this version, so that one was replaced between that check and the request.
 */
export function decodeActionAnswer(_action: string, status: number, body: unknown): Result<unknown> {
  const envelope = typeof body === 'object' && body !== null && typeof (body as { ok?: unknown }).ok === 'boolean';
  if (!envelope)
    // A crash, or something else on the port: what the full check answers too.
    return { ok: false, code: statusCode(status), message: `The service answered ${status} with an unexpected body.` };
  // The request may have been done, so the command cannot run again unasked.
  return {
    ok: false,
    code: 'service_unavailable',
    message:
      'the running service was replaced by another version while this command ran, and its answer was not read: check what the command was to do, then run it again',
  };
}
