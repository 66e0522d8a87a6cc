import { z } from 'zod';
import { Capability } from './users.ts';
import { lazySchema } from './lazy-schema.ts';

/** A tool as shown to people and to `discover_tools` (the registry's full descriptor lives in core). */
export const ToolInfo = lazySchema(() =>
  z.object({
    name: z.string(),
    title: z.string(),
    description: z.string(),
    plugin: z.string(),
    capability: Capability,
    feature: z.string(),
    write: z.boolean(),
    disabled: z.boolean().default(false),
  }),
);
export type ToolInfo = z.infer<typeof ToolInfo>;

export const PluginInfo = lazySchema(() =>
  z.object({
    id: z.string(),
    title: z.string(),
    kind: z.enum(['builtin', 'site', 'upstream']),
    status: z.enum(['ok', 'down', 'disabled', 'signed_out', 'sign_in_required']),
    detail: z.string().nullable().default(null),
    tools: z.number().int(),
  }),
);
export type PluginInfo = z.infer<typeof PluginInfo>;
