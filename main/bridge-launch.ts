import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { bridgeLaunchArgs, type BridgeLaunch } from './contract/client-config.ts';
import { defaultDataDir } from './contract/paths.ts';
import { PACKAGE_ROOT } from './package-root.ts';

/**
 * The launch line an MCP client on this machine uses for gatehouse-bridge,
 * as this process knows it: the node binary running it and the package's
 * bin/gatehouse-bridge.mjs, both absolute (a checkout install has no
 * `gatehouse-bridge` on PATH), plus the data dir the service uses (the vault
 * goes with a keychain token source: main/contract/client-config.ts).
 * Under Electron the running binary is not a node a client can start (its
 * runAsNode fuse is off), so the line names `node` from the PATH instead.
 */
export function bridgeLaunchFor(dataDir: string, env: Record<string, string | undefined> = process.env): BridgeLaunch {
  const script = realpathOr(join(PACKAGE_ROOT, 'bin', 'gatehouse-bridge.mjs'));
  const command = process.versions.electron ? 'node' : process.execPath;
  const args = bridgeLaunchArgs(script, { dataDir, defaultDataDir: defaultDataDir(process.platform, env, homedir()) });
  return { command, args, platform: process.platform };
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
