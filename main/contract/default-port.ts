/**
 * The service's port when none is given. Its own module, free of zod: the command's entry (help, --version)
 * names it, and loads nothing else of the contract.
 */
export const DEFAULT_PORT = 7823;
