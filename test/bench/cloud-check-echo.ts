/** Child of cloud-check-compare.ts: the bench's bare node:http JSON echo in its own process; prints {gateway} as one JSON line. */
import { echoServer } from './cloud-bench-client.ts';

const echo = await echoServer();
process.stdout.write(`${JSON.stringify({ gateway: echo.url, creds: null })}\n`);
process.once('SIGTERM', () => (echo.close(), process.exit(0)));
