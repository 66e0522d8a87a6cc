/**
 * The cloud client in a process of its own, for the SIGKILL tests. Opens the
 * client on DATA_DIR (file vault), records EVENTS usage events, and then:
 *  - MODE=record: prints READY and waits to be killed;
 *  - MODE=kill-after-answer: uploads, and kills itself with SIGKILL the
 *    moment the gateway's answer to usage/record has arrived, before the
 *    outbox could write down what was accepted.
 */
import { CloudClient } from '../../../main/cloud-client/index.ts';
import { nodeTransport, type Transport } from '../../../main/cloud-client/transport.ts';
import { uuidv7 } from '../../../main/lib/ids.ts';
import { createLogger } from '../../../main/lib/logger.ts';
import { openVault } from '../../../main/store/vault.ts';

const dataDir = process.env.DATA_DIR!;
const mode = process.env.MODE!;
const events = Number(process.env.EVENTS);
const log = createLogger({ level: 'error' });

const transport: Transport = async (req) => {
  const answer = await nodeTransport(req);
  if (mode === 'kill-after-answer' && req.url.pathname.endsWith('/usage/record') && answer.status === 200)
    process.kill(process.pid, 'SIGKILL');
  return answer;
};

const vault = await openVault({ dataDir, backend: 'file', log });
const client = await CloudClient.open({ dataDir, vault, log, transport, sleep: async () => {} });
for (let i = 0; i < events; i++)
  client.usage.record({
    event_id: uuidv7(Date.now()),
    event: 'mcp.tool.called',
    product: 'mcp',
    feature: 'site.pages.read',
    model: '',
    units: 1,
    tokens_input: 0,
    tokens_output: 0,
    timestamp: new Date().toISOString(),
  });
if (mode === 'record') {
  process.stdout.write('READY\n');
  setInterval(() => {}, 60_000);
} else {
  await client.usage.flush('interactive');
  process.stdout.write('NOT KILLED\n');
  process.exit(3);
}
