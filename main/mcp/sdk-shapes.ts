/**
 * Where Gatehouse's own shapes meet the MCP SDK's types, and the one module
 * allowed to say so with a cast (lint refuses `as never` and `as unknown as`
 * everywhere else). The server hands the SDK answers it built itself (a
 * tools/list kept as it was, an upstream's prompt or completion as the
 * upstream sent it, a task receipt) whose shapes the SDK's zod-derived result
 * types cannot follow; an upstream is handed back what a client answered it;
 * and Gatehouse reaches two private seams of the SDK's Server (discover's
 * answer and the handler wrapper, held by test/mcp/protocol-letter.test.ts
 * and test/mcp/staged-tasks.test.ts). Each function here is one such meeting,
 * named for what crosses.
 */
import type { Server } from '@modelcontextprotocol/server';

/**
 * A handler's answer the SDK checks at run time (its result schema) but whose static type Gatehouse does not
 * build field by field: a kept tools/list, an upstream's prompt, template list, completion or resource contents,
 * an input-required or task answer. Typed as whatever the handler must return.
 */
export const sdkAnswer = (answer: unknown): never => answer as never;

/** A request sent to the client mid-call (2025 era: elicitation, sampling) as the SDK's send takes it. */
export const sdkOutgoing = (request: { method: string; params?: unknown }): never => request as never;

/** A notification sent to the client on a request's own stream (an upstream's log message) as the SDK's notify takes it. */
export const sdkNotification = (notification: { method: string; params?: unknown }): never => notification as never;

/** The client's answer to it, as a plain record (the tool that asked checks its shape). */
export const sdkIncoming = (answer: unknown): Record<string, unknown> => answer as Record<string, unknown>;

/**
 * A client's answer to what an upstream asked (elicitation, sampling), handed back to the upstream as the SDK
 * Client's request handler returns it: the client's own record, passed on as it came (the upstream checks it).
 */
export const sdkRelayed = (answer: Record<string, unknown>): never => answer as never;

/** The SDK Server's private members a seam replaces (discover's answer, the handler wrapper). */
export const sdkInternals = <T>(server: Server): T => server as unknown as T;

/** A value as another of the SDK's types whose generics do not line up with ours (its handler registration, its Standard Schema). */
export const sdkAs = <T>(value: unknown): T => value as T;
