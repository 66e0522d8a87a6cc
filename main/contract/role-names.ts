/**
 * The roles a user may have, modelled on the host platform's, as plain data: `gatehouse users` checks a role with
 * it without building the contract's schemas (main/contract/users.ts makes `Role` of it).
 */
export const ROLE_NAMES = ['administrator', 'editor', 'author', 'contributor', 'subscriber'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];
