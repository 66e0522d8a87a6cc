/**
 * Thrown inside dist/cli/remote.cjs (main/cli/remote-main.ts) where a command needs what only the ES module bundle
 * holds: the data dir opened in this process, because no service runs. It is thrown before the command has sent or
 * printed anything (main/cli/connect.ts opens the connection first), so the whole command runs again there, from
 * its start.
 */
export class RunElsewhere extends Error {
  constructor() {
    super('this command runs on the data dir itself, which the ES module bundle does');
  }
}
