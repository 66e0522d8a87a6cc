import type { Guard } from '../../../main/lib/http/compose.ts';
import { parseJson } from '../../../main/lib/http/json.ts';
import type { CloudRequest } from '../cloud-request.ts';

/** The body as JSON (with the edge's nesting limit), {} when empty; parsed only once the caller is known. */
export const parseBody: Guard<CloudRequest> = (c) => {
  c.body = c.raw.length === 0 ? {} : parseJson(c.raw);
};
