import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/** Seed "Usage event" plus an event_id (UUIDv7) given when the event is created. */
export const UsageEvent = lazySchema(() =>
  z.object({
    event_id: z.string(),
    event: z.string().regex(/^[a-z0-9_]+(\.[a-z0-9_]+)+$/, 'a dotted event name'),
    site_id: z.string(),
    product: z.string(),
    feature: z.string(),
    model: z.string().default(''),
    units: z.number().int().nonnegative(),
    tokens_input: z.number().int().nonnegative().default(0),
    tokens_output: z.number().int().nonnegative().default(0),
    timestamp: z.string(),
  }),
);
export type UsageEvent = z.infer<typeof UsageEvent>;
