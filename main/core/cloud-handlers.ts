import type { ActionDeps, Handler } from './action-types.ts';
import type { CloudActions } from './cloud-port.ts';
import { GatehouseError } from './errors.ts';

const NO_CLIENT = 'the cloud client is not running in this process: start the service (gatehouse serve) and try again';

/** The console's cloud actions (main/contract/cloud-actions.ts), people only (checked by invoke before any of these runs). */
export function createCloudHandlers(deps: Pick<ActionDeps, 'cloudActions'>): {
  'cloud.status': Handler<'cloud.status'>;
  'cloud.connect': Handler<'cloud.connect'>;
  'cloud.activate': Handler<'cloud.activate'>;
  'cloud.deactivate': Handler<'cloud.deactivate'>;
  'cloud.sync': Handler<'cloud.sync'>;
  'cloud.disconnect': Handler<'cloud.disconnect'>;
  'cloud.usage': Handler<'cloud.usage'>;
  'updates.status': Handler<'updates.status'>;
  'updates.check': Handler<'updates.check'>;
} {
  const cloud = (): CloudActions => {
    if (!deps.cloudActions) throw new GatehouseError('service_unavailable', NO_CLIENT);
    return deps.cloudActions;
  };
  return {
    'cloud.status': async () => cloud().status(),
    'cloud.connect': async (input) => cloud().connect(input),
    'cloud.activate': async (input) => cloud().activate(input.license_key),
    'cloud.deactivate': async () => cloud().deactivate(),
    'cloud.sync': async () => cloud().sync(),
    'cloud.disconnect': async () => cloud().disconnect(),
    'cloud.usage': async (input) => cloud().usage(input),
    'updates.status': async () => cloud().updatesStatus(),
    'updates.check': async (input) => cloud().updatesCheck(input),
  };
}
