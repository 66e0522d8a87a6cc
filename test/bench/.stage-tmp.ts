import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startService } from '../../main/service.ts';
const dataDir = process.argv[2]!;
const n = Number(process.argv[3] ?? 100);
const svc = await startService({ dataDir, port: 0, vault: 'file', enable: true } as never);
await svc.invoke('settings.update', { rate_limit: 0 } as never, { kind: 'person', surface: 'cli', via: 'admin_key', session: null } as never).catch(() => undefined);
const { token } = await svc.createToken({ label: 'stage', user: 'admin' } as never);
const c = new Client({ name: 'stage', version: '1' });
await c.connect(new StreamableHTTPClientTransport(new URL(svc.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
const pages = (await c.callTool({ name: 'pages_list', arguments: {} })).structuredContent as { pages: Array<{ id: number }> };
for (let i = 0; i < n; i++) {
  const r = await c.callTool({ name: 'pages_update', arguments: { id: pages.pages[i % pages.pages.length]!.id, title: `Title ${i}` } });
  if (i === 0) console.log(JSON.stringify(r.structuredContent).slice(0, 200));
}
await c.close();
await svc.stop();
