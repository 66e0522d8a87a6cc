/**
 * Thrown inside dist/cli/remote.cjs (main/cli/remote-main.ts) where a command needs what only the ES module bundle
 * holds: the data dir opened in this process because no service runs, or the contract's check of the answers of a
 * service of another version. main/cli/connect.ts throws it as it opens the connection, which each command it is
 * run for does before it sends, prints or reads anything, so the whole command runs again there, from its start.
 */
export class RunElsewhere extends Error {
  constructor() {
    super('this command needs the ES module bundle');
  }
}

let remoteBuild = false;

/** Said by remote-main as it starts a command: from here on, connect hands such a command over instead. */
export function handOverWhatNeedsTheFullBuild(): void {
  remoteBuild = true;
}

export const handsOver = (): boolean => remoteBuild;
