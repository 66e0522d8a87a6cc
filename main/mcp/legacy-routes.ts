import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

type Id = string | number;
type Deliver = (message: JSONRPCMessage) => void;

const callKey = (token: string, id: Id) => `${token}\u0000${typeof id}:${id}`;

/**
 * Routes the messages a 2025-era client posts about an exchange still open
 * on another HTTP request: there is no session, each POST meets a fresh
 * server instance. Its answer to a request Gatehouse sent it (elicitation,
 * sampling) goes to the exchange that asked, and its `notifications/cancelled`
 * to the call it cancels, in both cases only for the same token. A request
 * sent to the client gets an id of its own here (each server instance
 * numbers from 0, so two calls would send the same ids).
 */
export class LegacyRoutes {
  private readonly asks = new Map<string, { token: string; id: Id; deliver: Deliver }>();
  private readonly calls = new Map<string, Deliver>();

  /** A request going out to the client: the id it travels with (routed back to `deliver` with the original id). */
  expect(token: string, id: Id, deliver: Deliver): string {
    const wire = `gatehouse-${randomUUID()}`;
    this.asks.set(wire, { token, id, deliver });
    return wire;
  }

  forgetAsk(wire: string): void {
    this.asks.delete(wire);
  }

  /** A call in flight that a posted cancellation may reach; returns the unregister. */
  open(token: string, id: Id, deliver: Deliver): () => void {
    const key = callKey(token, id);
    this.calls.set(key, deliver);
    return () => {
      if (this.calls.get(key) === deliver) this.calls.delete(key);
    };
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
      const deliver = this.calls.get(callKey(token, id));
      if (!deliver) return false;
      deliver(message as JSONRPCMessage);
      return true;
    }
    return false;
  }
}
