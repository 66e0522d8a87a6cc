import type { IncomingMessage } from 'node:http';
import { CLIENT_INFO_META_KEY } from '@modelcontextprotocol/server';
import type { ClientSource } from '../contract/audit.ts';
import { clientText } from '../core/calls/client-text.ts';

/** Tokens whose last client name is remembered; the least recently named is forgotten first. */
const MAX_TOKENS = 10_000;
const MAX_NAME = 80;

type Message = { params?: Record<string, unknown> };

/**
 * A short client name for the audit log: the MCP clientInfo when the request
 * carries it (every 2026-07-28 request; only `initialize` in the 2025 era, so
 * the last one seen is remembered per token), else User-Agent, else the
 * address. Anything but the request's own clientInfo is a guess, and `source`
 * says so. Every name is a client's string: bounded and stripped of control
 * characters, and the memory of them is a Map of bounded size.
 */
export class ClientNames {
  private readonly byToken = new Map<string, string>();

  name(
    req: IncomingMessage,
    message: Message,
    tokenId: string,
    address: string,
  ): { name: string; source: ClientSource } {
    const params = message.params as
      { clientInfo?: { name?: unknown }; _meta?: Record<string, { name?: unknown } | undefined> } | undefined;
    const sent = params?.clientInfo?.name ?? params?._meta?.[CLIENT_INFO_META_KEY]?.name;
    if (typeof sent === 'string' && sent) {
      const name = clientText(sent, MAX_NAME);
      if (this.byToken.get(tokenId) !== name) {
        this.byToken.delete(tokenId);
        if (this.byToken.size >= MAX_TOKENS) this.byToken.delete(this.byToken.keys().next().value!);
        this.byToken.set(tokenId, name);
      }
      return { name, source: 'request' };
    }
    const remembered = this.byToken.get(tokenId);
    if (remembered) return { name: remembered, source: 'remembered' };
    const ua = req.headers['user-agent'];
    return ua ? { name: clientText(ua, MAX_NAME), source: 'user_agent' } : { name: address, source: 'address' };
  }
}
