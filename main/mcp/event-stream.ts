import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ListChanges, ListKind } from './list-changed.ts';

const KEEPALIVE_MS = 15_000;

const NOTIFICATION: Record<ListKind, string> = {
  tools: `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`,
  resources: `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' })}\n\n`,
  prompts: `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' })}\n\n`,
};

/** Whether a GET asks for the server's event stream (Streamable HTTP, 2025 era). */
export const wantsEventStream = (req: IncomingMessage): boolean =>
  /\btext\/event-stream\b/i.test(req.headers.accept ?? '');

/**
 * The 2025-era Streamable HTTP GET stream, for an authenticated token: the
 * channel on which a client hears notifications/tools/list_changed (the SDK
 * client and gatehouse-bridge open it after `initialized`), the updates of
 * the resources it subscribed to and the log messages of the upstreams its
 * token sees (docs/upstreams.md, "Logs"). Keep-alive
 * comments hold it open through proxies; it ends with the client, at a
 * token's revocation, when the token opens one stream too many (its oldest
 * ends: `ListChanges.attach` keeps the bounds), or at shutdown. On an
 * upstream's own endpoint (`view`) it carries that view's changes only. Returns false
 * when the service holds too many streams already.
 */
export function openEventStream(
  req: IncomingMessage,
  res: ServerResponse,
  tokenId: string,
  lists: ListChanges,
  view?: string,
): boolean {
  if (!lists.hasRoomFor(tokenId)) return false;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.write(': gatehouse: list changes arrive here\n\n');
  let detach = () => {};
  const end = () => {
    clearInterval(keepAlive);
    detach();
    if (!res.writableEnded) res.end();
  };
  const keepAlive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepAlive.unref();
  detach = lists.attach({
    tokenId,
    ...(view ? { view } : {}),
    send: (kind) => res.write(NOTIFICATION[kind]),
    sendUpdated: (uri) =>
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } })}\n\n`,
      ),
    sendLog: (params) =>
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params })}\n\n`,
      ),
    close: end,
  });
  req.once('close', end);
  res.once('close', end);
  return true;
}
