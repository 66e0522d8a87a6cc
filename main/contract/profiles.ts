import { z } from 'zod';
import { UPSTREAM_ID } from './upstreams.ts';
import { lazySchema } from './lazy-schema.ts';

/**
 * A profile's name: the same rule as an upstream id (1-32 of a-z 0-9 and
 * inner hyphens), so it is safe as a key, in a path and in a terminal
 * (no `__proto__` or `constructor`, no control characters, no huge strings).
 */
export const ProfileName = lazySchema(() =>
  z
    .string()
    .regex(UPSTREAM_ID, 'a profile name is 1-32 of a-z 0-9 and inner hyphens, e.g. "readers" or "files-only"')
    // never a member of every object ("constructor", "valueOf"), should a name ever become a key
    .refine((s) => !(s in Object.prototype), 'a profile name cannot be a name every object has (e.g. "constructor")'),
);

const toolNames = lazySchema(() => z.array(z.string().min(1).max(128)).max(500));
const upstreamIds = lazySchema(() => z.array(z.string().min(1).max(64)).max(100));

/**
 * A named tool set (`gatehouse profiles create`): the tools named here and
 * every tool of the upstreams (plugins) named here. A token bound to it sees
 * at most that set, still within its user's capabilities and its own scope.
 */
export const Profile = lazySchema(() =>
  z.object({
    name: ProfileName,
    tools: toolNames.default([]),
    upstreams: upstreamIds.default([]),
    created: z.string(),
  }),
);
export type Profile = z.infer<typeof Profile>;

export const ProfileCreateInput = lazySchema(() =>
  z
    .object({ name: ProfileName, tools: toolNames.optional(), upstreams: upstreamIds.optional() })
    .strict()
    .refine(
      (p) => (p.tools?.length ?? 0) + (p.upstreams?.length ?? 0) > 0,
      'a profile names at least one tool (--tools a,b) or upstream (--upstreams x,y)',
    ),
);
export type ProfileCreateInput = z.infer<typeof ProfileCreateInput>;

/** A profile as shown: with the tokens bound to it. */
export const ProfileView = lazySchema(() =>
  Profile.extend({ tokens: z.array(z.object({ id: z.string(), label: z.string() })) }),
);
export type ProfileView = z.infer<typeof ProfileView>;
