import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { HttpError } from '../lib/http/http-error.ts';

type Id = string | number;
type Deliver = (message: JSONRPCMessage) => void;

const callKey = (token: string, id: Id) => `${token}\u0000${typeof id}:${id}`;

/** Calls of one token in progress at once (each is an open HTTP request; a route is held for each). */
export const MAX_OPEN_CALLS_PER_TOKEN = 256;

/** A call's cancellation route: `deliver` is set once its exchange is connected; `close` ends the route (idempotent). */
export interface CallRoute {
  deliver: Deliver | null;
  close(): void;
}

/**
 * Routes the messages a 2025-era client posts about an exchange still open
 * on another HTTP request: there is no session, each POST meets a fresh
 * server instance. Its answer to a request Gatehouse sent it (elicitation,
 * sampling) goes to the exchange that asked, and its `notifications/cancelled`
 * to the call it cancels, in both cases only for the same token. A request
 * sent to the client gets an id of its own here (each server instance
 * numbers from 0, so two calls would send the same ids).
 *
 * A request id is unique per requestor (MCP: not reused within a session),
 * but with no session the token is all Gatehouse knows, and two clients may
 * share a token (each numbering its requests from 0). So a call never takes
 * over another's route: each call with that token and id keeps its own, a
 * cancellation reaches the call it names when exactly one of the token's
 * calls in progress has that id, and none while several do (no client's
 * call is cancelled on another's behalf; a client that cancels also closes
 * the call's HTTP request, which cancels it). At most
 * MAX_OPEN_CALLS_PER_TOKEN calls are held per token.
 */
export class Routes2025 {
  private readonly asks = new Map<string, { token: string; id: Id; deliver: Deliver }>();
  private readonly calls = new Map<string, Set<CallRoute>>();
  private readonly openPerToken = new Map<string, number>();

  /** A request going out to the client: the id it travels with (routed back to `deliver` with the original id). */
  expect(token: string, id: Id, deliver: Deliver): string {
    const wire = `gatehouse-${randomUUID()}`;
    this.asks.set(wire, { token, id, deliver });
    return wire;
  }

  forgetAsk(wire: string): void {
    this.asks.delete(wire);
  }

  /** A call in flight that a posted cancellation may reach, reserved before its exchange starts; refused when the token holds too many. */
  open(token: string, id: Id): CallRoute | HttpError {
    const held = this.openPerToken.get(token) ?? 0;
    if (held >= MAX_OPEN_CALLS_PER_TOKEN) {
      return new HttpError(
        'rate_limited',
        `this token has ${MAX_OPEN_CALLS_PER_TOKEN} calls in progress: wait for one to end`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    this.openPerToken.set(token, held + 1);
    const key = callKey(token, id);
    const routes = this.calls.get(key) ?? new Set<CallRoute>();
    this.calls.set(key, routes);
    let open = true;
    const route: CallRoute = {
      deliver: null,
      close: () => {
        if (!open) return;
        open = false;
        routes.delete(route);
        if (routes.size === 0 && this.calls.get(key) === routes) this.calls.delete(key);
        const left = (this.openPerToken.get(token) ?? 1) - 1;
        if (left > 0) this.openPerToken.set(token, left);
        else this.openPerToken.delete(token);
      },
    };
    routes.add(route);
    return route;
  }

  /** Delivers a posted answer or cancellation to its exchange; false when it belongs to none of this token's. */
  route(token: string, message: { id?: Id; method?: string; params?: Record<string, unknown> }): boolean {
    if (message.method === undefined && message.id !== undefined) {
      const ask = this.asks.get(String(message.id));
      if (!ask || ask.token !== token) return false;
      this.asks.delete(String(message.id));
      ask.deliver({ ...(message as JSONRPCMessage), id: ask.id } as JSONRPCMessage);
      return true;
    }
    if (message.method === 'notifications/cancelled') {
      const id = message.params?.requestId;
      if (typeof id !== 'string' && typeof id !== 'number') return false;
      const routes = this.calls.get(callKey(token, id));
      // Several calls of this token have that id (two clients sharing it): which one is meant is unknown.
      const deliver = routes?.size === 1 ? [...routes][0]!.deliver : null;
      if (!deliver) return false;
      deliver(message as JSONRPCMessage);
      return true;
    }
    return false;
  }
}
