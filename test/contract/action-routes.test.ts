import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACTION_ROUTES_FILE, actionRoutesSource } from '../../scripts/gen-action-routes.ts';
import { actionRequest } from '../../main/contract/action-request.ts';
import { API_ACTIONS, actionPrefix, type AnyAction } from '../../main/contract/api.ts';

describe('main/contract/action-routes.ts', () => {
  it('is what API_ACTIONS makes of it (run `npm run gen:routes` after changing an action)', () => {
    expect(readFileSync(ACTION_ROUTES_FILE, 'utf8')).toBe(actionRoutesSource());
  });

  it("builds every action's request on the route API_ACTIONS gives it: its method, prefix and path", () => {
    for (const action of Object.keys(API_ACTIONS) as AnyAction[]) {
      const def = API_ACTIONS[action];
      const req = actionRequest(action, {});
      expect(req.method).toBe(def.method);
      // no params given: each `:param` is filled with the empty string
      expect(req.path.split('?')[0]).toBe(`${actionPrefix(action)}/${def.path.replace(/:[a-z_]+/g, '')}`);
    }
  });

  it('fills params encoded, puts the rest in the query of a GET or DELETE and in the JSON body otherwise', () => {
    expect(actionRequest('upstreams.recipe_remove', { id: 'a/b c', tool: '?#', extra: ['x', 'y'] })).toEqual({
      method: 'DELETE',
      path: '/wp-json/gatehouse/v1/admin/upstreams/a%2Fb%20c/recipes/%3F%23?extra=x&extra=y',
    });
    expect(actionRequest('users.setRole', { login: 'ü', role: 'editor' })).toEqual({
      method: 'PUT',
      path: '/wp-json/gatehouse/v1/admin/users/%C3%BC/role',
      body: '{"role":"editor"}',
    });
    expect(actionRequest('pro.license', {}).path).toBe('/wp-json/gatehouse/v1/pro/license');
  });
});
