import { BodyBudget, readBody } from '../../../main/lib/http/body.ts';
import type { Guard } from '../../../main/lib/http/compose.ts';
import type { CloudRequest } from '../cloud-request.ts';

/** The raw body, within the route's bound and the memory every body being read shares. */
export function readRequestBody(budget = new BodyBudget(16 * 1024 * 1024, 64 * 1024)): Guard<CloudRequest> {
  return async (c) => {
    c.raw = await readBody(c.req, { limit: c.entry!.maxBody, budget });
  };
}
