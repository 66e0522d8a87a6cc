import type { ActionDeps, Handler } from './action-types.ts';
import { CLOUD_ACTIONS, type CloudAction, type CloudActionMethods, type CloudActions } from '../ports/cloud-port.ts';
import { GatehouseError } from '../errors.ts';

const NO_CLIENT = 'the cloud client is not running in this process: start the service (gatehouse serve) and try again';

export type CloudHandlers = { [A in CloudAction]: Handler<A> };

/** The console's cloud actions (main/contract/cloud-actions.ts), people only (checked by invoke before any of these runs): each forwards to the port's method of that name. */
export function createCloudHandlers(deps: Pick<ActionDeps, 'cloudActions'>): CloudHandlers {
  const cloud = (): CloudActions => {
    if (!deps.cloudActions) throw new GatehouseError('service_unavailable', NO_CLIENT);
    return deps.cloudActions;
  };
  // Looked up on CloudActionMethods (a mapped type), the method of a generic `action` has that action's own signature.
  const forward =
    <A extends CloudAction>(action: A): Handler<A> =>
    async (input) => {
      const methods: CloudActionMethods = cloud();
      return methods[action](input);
    };
  return Object.fromEntries(CLOUD_ACTIONS.map((a) => [a, forward(a)])) as CloudHandlers;
}
