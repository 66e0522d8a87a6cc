import type { z } from 'zod';
import {
  API_ACTIONS,
  type AnyAction,
  type ApiActions,
  type RawDispatch,
  type ApiOutput,
  type Who,
} from '../../contract/api.ts';
import type { Result } from '../../contract/errors.ts';
import type { Principal } from '../../contract/principal.ts';
import type { Logger } from '../../lib/logger.ts';
import { createHandlers } from './action-handlers.ts';
import type { ActionDeps, Handlers, InvokeMeta } from './action-types.ts';
import { checkCaller } from '../identity/permissions.ts';
import { GatehouseError, toErrorShape } from '../errors.ts';

export type { ActionDeps, InvokeMeta } from './action-types.ts';

/**
 * The one way into the core's actions, for every surface (IPC, the tray, the
 * admin API and local REST, the CLI with and without a service): who may
 * call it (`who` in API_ACTIONS), then the input against the action's
 * schema, then the handler. The same input from the same kind of caller gets
 * the same answer, code and message, whichever way it came.
 */
export type Invoke = <A extends AnyAction>(
  action: A,
  rawInput: unknown,
  principal: Principal,
  meta?: InvokeMeta,
) => Promise<Result<ApiOutput<A>>>;

const MAX_ISSUES = 20;

export function createInvoke(deps: ActionDeps & { log?: Logger }): Invoke {
  const handlers: Handlers = createHandlers(deps);
  // Generic in the action, so the handler looked up is that action's own (Handlers is a mapped type).
  const run = <A extends AnyAction>(action: A, rawInput: unknown, principal: Principal, meta: InvokeMeta) => {
    const schema: z.ZodType = API_ACTIONS[action].input;
    const parsed = schema.safeParse(rawInput);
    if (!parsed.success) throw invalidInput(action, parsed.error);
    // Parsed by this action's own schema just above: its output, which TypeScript cannot tie to a schema looked up by name.
    return handlers[action](parsed.data as z.output<ApiActions[A]['input']>, principal, meta);
  };
  return (async (
    action: AnyAction,
    rawInput: unknown,
    principal: Principal,
    meta: InvokeMeta = {},
  ): Promise<Result<unknown>> => {
    // Object.hasOwn: an action name from a transport must not reach `constructor` or `__proto__`.
    if (typeof action !== 'string' || !Object.hasOwn(API_ACTIONS, action)) {
      return { ok: false, code: 'not_found', message: `unknown action '${String(action).slice(0, 100)}'` };
    }
    const who: Who = API_ACTIONS[action].who;
    try {
      checkCaller(action, who, principal, deps);
      return { ok: true, data: await run(action, rawInput ?? {}, principal, meta) };
    } catch (e) {
      if (!(e instanceof GatehouseError))
        deps.log?.error('action failed', { action, error: e instanceof Error ? e.message : String(e) });
      return { ok: false, ...toErrorShape(e) };
    }
  }) as Invoke;
}

/** `action: field.path: what is wrong` from the first issue; all of them (bounded) in details. */
function invalidInput(action: string, error: z.ZodError): GatehouseError {
  const issues = error.issues
    .slice(0, MAX_ISSUES)
    .map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  const first = issues[0];
  return new GatehouseError('invalid_value', `${action}: ${first?.path || 'input'}: ${first?.message ?? 'invalid'}`, {
    issues,
  });
}

/** `invoke` bound to one principal: what the tray, a test or the in-process service API hold. */
export const dispatchAs =
  (invoke: Invoke, principal: Principal): RawDispatch =>
  (action, input) =>
    invoke(action, input, principal);
