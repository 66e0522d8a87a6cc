import { GatehouseError } from '../core/errors.ts';

/**
 * A secret given on stdin (`-` where the command takes it), so it never sits in the shell's history or the process
 * list. Bounded, trimmed of the newline a shell or `echo` adds; `what` names it in the one error, never its value.
 */
export async function readSecretFromStdin(what: string, maxBytes = 4096): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) {
    chunks.push(c as Buffer);
    if (chunks.reduce((n, b) => n + b.length, 0) > maxBytes)
      throw new GatehouseError('invalid_value', `the ${what} read from stdin is longer than any ${what}`);
  }
  return Buffer.concat(chunks).toString('utf8').trim();
}
