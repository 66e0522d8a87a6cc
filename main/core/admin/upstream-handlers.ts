import type { ActionDeps, Handler } from './action-types.ts';
import type { UpstreamActions } from '../ports/upstreams-port.ts';
import { GatehouseError } from '../errors.ts';
import type { Principal } from '../../contract/principal.ts';
import type { UpstreamProcessView, UpstreamView } from '../../contract/upstreams.ts';
import { recipeText } from '../../contract/preview-recipes.ts';

/** A stdio upstream's confinement as one audit reason: `confined: write ~/notes; net api.github.com` or `unconfined (a person's choice)`. */
export function confinementReason(v: Pick<UpstreamView, 'confinement'>): string | null {
  const c = v.confinement;
  if (!c) return null;
  const grants = c.grants.map((g) => `${g.kind} ${g.value}`).join('; ') || 'no grants';
  return c.state === 'unconfined' ? `unconfined: ${c.why}` : `${c.state}: ${grants}`;
}

/** A stdio upstream's processes as one audit reason: `shared` or `per-client: at most 8 at once, stopped after 900 s idle`. */
export function processReason(p: Pick<UpstreamProcessView, 'mode' | 'max' | 'idle_ms'>): string {
  return p.mode === 'shared'
    ? 'shared'
    : `per-client: at most ${p.max} at once, stopped after ${Math.round(p.idle_ms / 1000)} s idle`;
}

/** The upstream actions (main/contract/upstreams.ts), people only (checked by invoke before any of these runs). */
export function createUpstreamHandlers(deps: Pick<ActionDeps, 'upstreams' | 'auditor'>): {
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
  'upstreams.grant': Handler<'upstreams.grant'>;
  'upstreams.process': Handler<'upstreams.process'>;
  'upstreams.recipes': Handler<'upstreams.recipes'>;
  'upstreams.recipe_set': Handler<'upstreams.recipe_set'>;
  'upstreams.recipe_remove': Handler<'upstreams.recipe_remove'>;
  'upstreams.oauth': Handler<'upstreams.oauth'>;
  'upstreams.login': Handler<'upstreams.login'>;
  'upstreams.logout': Handler<'upstreams.logout'>;
} {
  // Every answer here may hold an upstream's confinement: it waits until the machine was asked (UpstreamActions.settled).
  const up = async (): Promise<UpstreamActions> => {
    if (!deps.upstreams)
      throw new GatehouseError('service_unavailable', 'upstream servers are not managed in this process');
    await deps.upstreams.settled();
    return deps.upstreams;
  };
  // What a server may reach is a person's decision like its definition: who set which grants is in the audit log.
  const audit = (action: string, id: string, v: Pick<UpstreamView, 'confinement'>, principal: Principal) => {
    const reason = confinementReason(v);
    if (reason)
      deps.auditor?.recordAction(
        { tool: action, write: true, result: 'ok', source_plugin: id, target: id, reason },
        { principal },
      );
  };
  const change = (action: string, id: string, tool: string, reason: string, principal: Principal) =>
    deps.auditor?.recordAction(
      { tool: action, write: true, result: 'ok', source_plugin: id, target: `${id}__${tool}`, reason },
      { principal },
    );
  return {
    'upstreams.list': async () => (await up()).list(),
    'upstreams.get': async (input) => (await up()).get(input.id),
    'upstreams.add': async (input, principal) => {
      const d = await (await up()).add(input);
      audit('upstreams.add', d.id, d, principal);
      return d;
    },
    'upstreams.grant': async (input, principal) => {
      const d = await (await up()).grant(input);
      audit('upstreams.grant', d.id, d, principal);
      return d;
    },
    // How many processes a server runs (and so whose state it mixes) is a person's configuration like a grant.
    'upstreams.process': async (input, principal) => {
      const d = await (await up()).setProcess(input);
      const p = d.process;
      if (p)
        deps.auditor?.recordAction(
          {
            tool: 'upstreams.process',
            write: true,
            result: 'ok',
            source_plugin: d.id,
            target: d.id,
            reason: processReason(p),
          },
          { principal },
        );
      return d;
    },
    'upstreams.recipes': async (input) => (await up()).recipes(input.id),
    // What a preview may read is a person's configuration like a grant: who set which recipe is in the audit log.
    'upstreams.recipe_set': async (input, principal) => {
      const views = await (await up()).setRecipe(input);
      change('upstreams.recipe_set', input.id, input.recipe.tool, recipeText(input.recipe), principal);
      return views;
    },
    'upstreams.recipe_remove': async (input, principal) => {
      const views = await (await up()).removeRecipe(input);
      const shipped = views.some((v) => v.tool === input.tool && v.source === 'shipped');
      const reason = `${input.tool}: the person's recipe removed${shipped ? ', the shipped one applies again' : ''}`;
      change('upstreams.recipe_remove', input.id, input.tool, reason, principal);
      return views;
    },
    'upstreams.remove': async (input) => (await up()).remove(input.id),
    'upstreams.enable': async (input) => (await up()).setEnabled(input.id, true),
    'upstreams.disable': async (input) => (await up()).setEnabled(input.id, false),
    'upstreams.test': async (input) => (await up()).test(input.id),
    'upstreams.tools': async (input) => (await up()).tools(input.id),
    'upstreams.review': async (input) => (await up()).review(input),
    'upstreams.prompts': async (input) => (await up()).prompts(input.id),
    'upstreams.oauth': async (input) => (await up()).oauthStatus(input.id, input.wait_ms),
    'upstreams.login': async (input) => (await up()).login(input.id),
    'upstreams.logout': async (input) => (await up()).logout(input.id),
  };
}
