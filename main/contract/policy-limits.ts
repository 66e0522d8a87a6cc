/**
 * A policy's text is bounded, so a pasted file cannot exhaust the service. Its own module, free of zod: the policy
 * commands check a file's size before sending it, and a command sent to a running service loads no schema.
 */
export const POLICY_MAX_CHARS = 256 * 1024;
