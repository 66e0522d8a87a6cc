/**
 * The AI modules' share of `ai/generate`'s added latency (the target
 * for the whole gateway: at most 5 ms p50 over calling the provider
 * directly). Side by side, interleaved, against one local fixture provider:
 * a bare node:http POST reading the JSON answer, `callProvider` (streaming
 * off and on), and `generateAi` (plan + breaker + executor + adapter).
 */
import http from 'node:http';
import { generateAi, type AiRoutingContext } from '../../cloud/ai/ai-router.ts';
import { callProvider } from '../../cloud/ai/providers/call-provider.ts';
import { BreakerBoard } from '../../cloud/ai/routing/breaker.ts';
import { OPEN_POLICY } from '../../cloud/ai/routing/policy.ts';
import { startOpenAiFixture } from '../fixtures/ai-providers/fixture-provider.ts';
import { printTable, summarize } from './stats.ts';

const N = Number(process.env.BENCH_N ?? 400);
const fx = await startOpenAiFixture();
const provider = {
  id: 'fx',
  kind: 'openai' as const,
  base_url: fx.baseUrl,
  api_key_env: 'BENCH_KEY',
  models: ['m'],
  tags: [],
  enabled: true,
};
const env = { BENCH_KEY: fx.key };
const messages = [{ role: 'user' as const, content: 'Say hello to the benchmark.' }];
const agent = new http.Agent({ keepAlive: true });
const body = JSON.stringify({ model: 'm', messages, max_tokens: 32 });

function bare(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${fx.baseUrl}/chat/completions`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${fx.key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          JSON.parse(Buffer.concat(parts).toString());
          resolve();
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const ctx: AiRoutingContext = {
  providers: [provider],
  policy: OPEN_POLICY,
  breakers: new BreakerBoard(),
  now: Date.now(),
};
const cases: Array<[string, () => Promise<unknown>]> = [
  ['bare node:http POST', bare],
  ['callProvider', () => callProvider(provider, { model: 'm', messages, max_tokens: 32 }, { env })],
  [
    'callProvider stream',
    () => callProvider(provider, { model: 'm', messages, max_tokens: 32, stream: true }, { env }),
  ],
  [
    'generateAi',
    () => generateAi(ctx, { product: 'aeo', feature: 'aeo.answers', messages, max_tokens: 32 }, { call: { env } }),
  ],
];

const samples = cases.map(() => [] as number[]);
for (let i = 0; i < 50; i++) for (const [, run] of cases) await run();
for (let i = 0; i < N; i++) {
  for (const [k, [, run]] of cases.entries()) {
    const t = performance.now();
    await run();
    samples[k]!.push(performance.now() - t);
  }
}
const base = summarize(samples[0]!).p50;
printTable(
  `AI provider call, ${N} interleaved rounds against a local fixture (ms)`,
  ['case', 'p50', 'p99', 'p50 added over bare'],
  cases.map(([name], k) => {
    const s = summarize(samples[k]!);
    return [name, s.p50, s.p99, s.p50 - base];
  }),
);
agent.destroy();
await fx.close();
