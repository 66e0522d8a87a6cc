import type { ActionDeps, Handler } from './action-types.ts';
import type { UpstreamActions } from '../ports/upstreams-port.ts';
import { GatehouseError } from '../errors.ts';

/** The upstream actions (main/contract/upstreams.ts), people only (checked by invoke before any of these runs). */
export function createUpstreamHandlers(deps: Pick<ActionDeps, 'upstreams'>): {
  'upstreams.list': Handler<'upstreams.list'>;
  'upstreams.get': Handler<'upstreams.get'>;
  'upstreams.add': Handler<'upstreams.add'>;
  'upstreams.remove': Handler<'upstreams.remove'>;
  'upstreams.enable': Handler<'upstreams.enable'>;
  'upstreams.disable': Handler<'upstreams.disable'>;
  'upstreams.test': Handler<'upstreams.test'>;
  'upstreams.tools': Handler<'upstreams.tools'>;
  'upstreams.review': Handler<'upstreams.review'>;
  'upstreams.prompts': Handler<'upstreams.prompts'>;
  'upstreams.oauth': Handler<'upstreams.oauth'>;
  'upstreams.login': Handler<'upstreams.login'>;
  'upstreams.logout': Handler<'upstreams.logout'>;
} {
  const up = (): UpstreamActions => {
    if (!deps.upstreams)
      throw new GatehouseError('service_unavailable', 'upstream servers are not managed in this process');
    return deps.upstreams;
  };
  return {
    'upstreams.list': async () => up().list(),
    'upstreams.get': async (input) => up().get(input.id),
    'upstreams.add': async (input) => up().add(input),
    'upstreams.remove': async (input) => up().remove(input.id),
    'upstreams.enable': async (input) => up().setEnabled(input.id, true),
    'upstreams.disable': async (input) => up().setEnabled(input.id, false),
    'upstreams.test': async (input) => up().test(input.id),
    'upstreams.tools': async (input) => up().tools(input.id),
    'upstreams.review': async (input) => up().review(input),
    'upstreams.prompts': async (input) => up().prompts(input.id),
    'upstreams.oauth': async (input) => up().oauthStatus(input.id, input.wait_ms),
    'upstreams.login': async (input) => up().login(input.id),
    'upstreams.logout': async (input) => up().logout(input.id),
  };
}
