import { join } from 'node:path';
import type { RuntimeInfo } from '../main/contract/health.ts';
import { RUNTIME_FILE } from '../main/contract/paths.ts';
import type { Failure } from './failures.ts';

/**
 * Where requests go: --url, or the local service's `mcp_url` from
 * runtime.json. The file is re-read after a connection failure, because the
 * service may have restarted on another port, or not be up yet.
 */

/** `failure`: waiting cannot help (the service refused): the request fails with it at once instead of retrying until the deadline. */
export type TargetLookup = { ok: true; url: URL } | { ok: false; reason: string; failure?: Failure };

/** Where requests go, as the link sees it: this class (--url or the service's endpoint), or remote-target.ts (--remote). */
export interface TargetSource {
  lookup(signal?: AbortSignal): Promise<TargetLookup>;
  /** forget what was found, so the next lookup starts over (after a connection failure) */
  invalidate(): void;
  describe(): string;
}

export class Target implements TargetSource {
  private cached: URL | undefined;

  constructor(
    private readonly fixed: string | undefined,
    private readonly dataDir: () => string,
  ) {}

  async lookup(): Promise<TargetLookup> {
    if (this.fixed !== undefined) return { ok: true, url: (this.cached ??= new URL(this.fixed)) };
    if (this.cached) return { ok: true, url: this.cached };
    const found = await readRuntimeUrl(this.dataDir());
    if (found.ok) this.cached = found.url;
    return found;
  }

  /** Forget the runtime.json answer so the next lookup reads the file again. */
  invalidate(): void {
    if (this.fixed === undefined) this.cached = undefined;
  }

  describe(): string {
    return this.fixed ?? `the Gatehouse service (runtime.json in ${this.dataDir()})`;
  }
}

/**
 * Read by hand rather than with the contract's zod schema: zod costs the
 * bridge ~70 ms of start-up, and only `mcp_url` and `pid` matter here. The
 * RuntimeInfo type still ties these field names to the contract.
 */
export async function readRuntimeUrl(dataDir: string, orElse = ', or pass --url'): Promise<TargetLookup> {
  const file = join(dataDir, RUNTIME_FILE);
  let text: string;
  try {
    // Imported here: only bridges without --url read the file.
    const { readFile } = await import('node:fs/promises');
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return {
        ok: false,
        reason: `Gatehouse is not running (no ${RUNTIME_FILE} in ${dataDir}): start the Gatehouse app or \`gatehouse serve\`${orElse}`,
      };
    return { ok: false, reason: `cannot read ${file}: ${code ?? String(e)}` };
  }
  let info: Partial<Record<keyof RuntimeInfo, unknown>>;
  try {
    info = JSON.parse(text) as typeof info;
  } catch {
    return { ok: false, reason: `${file} is not valid JSON (the service may be writing it)` };
  }
  const mcpUrl: unknown = info?.mcp_url;
  if (typeof mcpUrl !== 'string' || !/^https?:\/\//.test(mcpUrl))
    return { ok: false, reason: `${file} has no usable mcp_url` };
  if (typeof info.pid === 'number' && !pidAlive(info.pid)) {
    return {
      ok: false,
      reason: `Gatehouse is not running (${RUNTIME_FILE} was left by process ${info.pid}, which has exited): start the Gatehouse app or \`gatehouse serve\``,
    };
  }
  try {
    return { ok: true, url: new URL(mcpUrl) };
  } catch {
    return { ok: false, reason: `${file} has an invalid mcp_url` };
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
