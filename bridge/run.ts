import { homedir } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { resolveDataDir } from '../main/contract/paths.ts';
import type { BridgeOptions } from './args.ts';
import { CredentialError, resolveHeaders } from './credentials.ts';
import { jsonRpcCode } from './failures.ts';
import { HttpSide } from './http-side.ts';
import { Link } from './link.ts';
import { createBridgeLogger } from './log.ts';
import { Pump } from './pump.ts';
import { LineReader, LineWriter } from './stdio-side.ts';
import { RemoteTarget } from './remote-target.ts';
import { Target, type TargetSource } from './target.ts';
import { EXIT } from './usage.ts';

/**
 * Wires the bridge: logger, target, credentials, the two sides and the pump;
 * and ends it: stdin EOF, a broken stdout, SIGINT or SIGTERM abort what is in
 * flight, close the session, and resolve with the exit code.
 */

export interface BridgeIo {
  stdin: Readable;
  stdout: Writable;
  env: Record<string, string | undefined>;
}

export function runBridge(opts: BridgeOptions, io: BridgeIo): Promise<number> {
  const log = createBridgeLogger({ level: opts.logLevel, file: opts.logFile });
  let dataDir: string | undefined;
  const getDataDir = () => (dataDir ??= resolveDataDir(opts.dataDir, process.platform, io.env, homedir()));
  const http = new HttpSide();

  return new Promise<number>((resolve) => {
    let ending = false;
    const end = async (code: number, why: string) => {
      if (ending) return;
      ending = true;
      log.debug(`stopping: ${why}`, { in_flight: pump.inFlight });
      await pump.shutdown();
      http.close();
      await log.close();
      resolve(code);
    };

    const headers = resolveHeaders(opts, { env: io.env, log, dataDir: getDataDir });
    // Settled once; every request awaits the same promise, so the keychain is read once.
    headers.catch(async (e: unknown) => {
      const msg =
        e instanceof CredentialError
          ? e.message
          : `could not read the token: ${e instanceof Error ? e.message : String(e)}`;
      log.error(msg);
      // A request already waiting for the token is answered with the reason first (the pump
      // sees the same rejection and needs the error codes for its answer); then the bridge exits.
      await jsonRpcCode('unauthorized');
      setImmediate(() => void end(EXIT.credential, 'no credential'));
    });

    const hasCredential = Boolean(
      opts.tokenEnv || opts.tokenKeychain || opts.headers.some((h) => h.name.toLowerCase() === 'authorization'),
    );
    const target: TargetSource = opts.remote
      ? new RemoteTarget(opts.remote, getDataDir, http, () => headers, hasCredential)
      : new Target(opts.url, getDataDir);
    const link = new Link(http, target, () => headers, log, opts.connectTimeoutMs);
    const out = new LineWriter(io.stdout, () => void end(EXIT.ok, 'stdout closed'));
    const pump = new Pump(link, out, log, hasCredential);
    new LineReader(
      io.stdin,
      (line) => pump.onLine(line),
      () => void end(EXIT.ok, 'stdin closed'),
    );

    const onSignal = (sig: NodeJS.Signals) => void end(EXIT.ok, sig);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    log.debug('bridge started', { target: target.describe() });
  });
}
