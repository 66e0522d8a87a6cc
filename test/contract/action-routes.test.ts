import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACTION_ROUTES_FILE, actionRoutesSource } from '../../scripts/gen-action-routes.ts';
import { actionRequest } from '../../main/contract/action-request.ts';
import { API_ACTIONS, actionPath, actionPrefix, type AnyAction } from '../../main/contract/api.ts';

describe('main/contract/action-routes.ts', () => {
  it('is what API_ACTIONS makes of it (run `npm run gen:routes` after changing an action)', () => {
    expect(readFileSync(ACTION_ROUTES_FILE, 'utf8')).toBe(actionRoutesSource());
  });

  it("builds every action's request on the route API_ACTIONS gives it, its params filled and encoded", () => {
    for (const action of Object.keys(API_ACTIONS) as AnyAction[]) {
      const input = { id: 'a/b c', login: 'ü', name: '?#', uri: 'x', extra: 'kept' };
      const { path, rest } = actionPath(action, input);
      const req = actionRequest(action, input);
      expect(req.method).toBe(API_ACTIONS[action].method);
      const inQuery = req.method === 'GET' || req.method === 'DELETE';
      const [where, query = ''] = req.path.split('?');
      expect(where).toBe(`${actionPrefix(action)}/${path}`);
      if (inQuery) expect(Object.fromEntries(new URLSearchParams(query))).toEqual(rest);
      else expect(JSON.parse(req.body!)).toEqual(rest);
    }
  });
});
