/**
 * The largest server message the bridge holds. The bridge must keep a whole
 * message before it can write it as one stdio line, so a server that sends a
 * line that never ends (a bug, or a hostile remote endpoint) would otherwise
 * grow the bridge's memory until the OS kills it, taking the client's session
 * with it. 64 MiB is eight times the largest result we test end to end and
 * more than any stdio client we know accepts on one line.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export class MessageTooLarge extends Error {
  override name = 'MessageTooLarge';
  /** `lastEventId`: the id of the last whole event of the stream, where a resumed stream must start. */
  constructor(
    readonly limit: number,
    readonly lastEventId?: string,
  ) {
    super(
      `the server sent a message larger than ${Math.round(limit / (1024 * 1024))} MiB; the bridge stopped reading it`,
    );
  }
}
