import { z } from 'zod';
import { ROLE_NAMES } from './role-names.ts';
import { lazySchema } from './lazy-schema.ts';

export const Role = lazySchema(() => z.enum(ROLE_NAMES));
export type Role = z.infer<typeof Role>;

export const Capability = lazySchema(() =>
  z.enum([
    'read',
    'edit_pages',
    'edit_others_pages',
    'publish_pages',
    'delete_pages',
    'manage_options',
    'use_ai',
    'view_audit',
    'use_upstreams',
  ]),
);
export type Capability = z.infer<typeof Capability>;

/** Role -> capabilities, modelled on the host platform's roles. */
export const ROLE_CAPABILITIES: Record<Role, readonly Capability[]> = {
  administrator: Capability.options,
  editor: [
    'read',
    'edit_pages',
    'edit_others_pages',
    'publish_pages',
    'delete_pages',
    'use_ai',
    'view_audit',
    'use_upstreams',
  ],
  author: ['read', 'edit_pages', 'publish_pages', 'use_ai'],
  contributor: ['read', 'edit_pages'],
  subscriber: ['read'],
};

export const Login = lazySchema(() =>
  z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9._-]{0,59}$/,
      'a login is 1-60 characters: lower-case letters, digits, . _ -, starting with a letter or digit',
    ),
);

export const User = lazySchema(() =>
  z.object({
    id: z.string(),
    login: Login,
    display_name: z.string(),
    role: Role,
    created: z.string(),
  }),
);
export type User = z.infer<typeof User>;

/**
 * The user a token is bound to when none is named: `agent`, an editor. The
 * least privilege the built-in tools need (read, edit and publish pages,
 * others' too as the seeded pages are the administrator's, delete, use AI),
 * and nothing of the administrator's (`manage_options`). Created the first
 * time a token needs it; a person may change its role like any user's. The
 * administrator only when asked (`--user admin`). See docs/decisions.md.
 */
export const DEFAULT_TOKEN_USER = {
  login: 'agent',
  role: 'editor',
  display_name: 'AI agent (default for tokens)',
} as const satisfies { login: string; role: Role; display_name: string };
