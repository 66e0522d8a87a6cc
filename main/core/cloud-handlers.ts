import type { ActionDeps, Handler } from './action-handlers.ts';
import { GatehouseError } from './errors.ts';

const notYet = async (): Promise<never> => {
  throw new GatehouseError('service_unavailable', 'the cloud actions are being wired (issue 13 phase B)');
};

/** The console's cloud actions (main/contract/cloud-actions.ts). */
export function createCloudHandlers(_deps: ActionDeps): {
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
  return {
    'cloud.status': notYet,
    'cloud.connect': notYet,
    'cloud.activate': notYet,
    'cloud.deactivate': notYet,
    'cloud.sync': notYet,
    'cloud.disconnect': notYet,
    'cloud.usage': notYet,
    'updates.status': notYet,
    'updates.check': notYet,
  };
}
