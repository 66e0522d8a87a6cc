import type { ActionDeps, Handler } from './action-types.ts';
import type { ClientActions } from '../ports/clients-port.ts';
import { GatehouseError } from '../errors.ts';

/** The MCP client actions (main/contract/clients.ts, docs/clients.md), people only (checked by invoke before any of these runs). */
export function createClientHandlers(deps: Pick<ActionDeps, 'clients'>): {
  'clients.list': Handler<'clients.list'>;
  'clients.plan': Handler<'clients.plan'>;
  'clients.import': Handler<'clients.import'>;
  'clients.connect': Handler<'clients.connect'>;
  'clients.restore': Handler<'clients.restore'>;
} {
  const c = (): ClientActions => {
    if (!deps.clients) throw new GatehouseError('service_unavailable', 'MCP clients are not managed in this process');
    return deps.clients;
  };
  return {
    'clients.list': async () => c().list(),
    'clients.plan': async (input) => c().plan(input),
    'clients.import': async (input) => c().importOne(input),
    'clients.connect': async (input) => c().connect(input.client),
    'clients.restore': async (input) => c().restore(input.client),
  };
}
