import { request, type Agent } from 'node:http';

/** One JSON request through a keep-alive agent, answered with its status and text (the benchmarks' client). */
export function sendWith(agent: Agent) {
  return (
    url: string,
    method: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        url,
        { method, agent, headers: { 'content-type': 'application/json', ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res
            .on('data', (c: Buffer) => chunks.push(c))
            .on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
