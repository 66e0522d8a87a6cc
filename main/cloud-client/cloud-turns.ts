import { GatehouseError } from '../core/errors.ts';

/**
 * The turn-taking of one CloudClient (console, tray and CLI share it): a
 * connect or disconnect runs alone, activate/deactivate/sync queue one
 * behind the other, and a disconnect stops those already under way.
 */
export class ChangeGuard {
  /** the connect or disconnect running now: another one answers conflict */
  private changing: 'connect' | 'disconnect' | null = null;
  /**
   * Moves when a disconnect starts: an activate, deactivate or sync that
   * began before it stops at its next step instead of writing its answer
   * (credentials, license, certificate) into the disconnected state.
   */
  epoch = 0;
  /** the end of the last activate, deactivate or sync queued */
  private turn: Promise<unknown> = Promise.resolve();

  inTurn<T>(run: () => Promise<T>): Promise<T> {
    const mine = this.turn.then(run);
    this.turn = mine.catch(() => undefined);
    return mine;
  }

  /** Runs a connect or disconnect alone (refused with conflict while another runs); a disconnect moves the epoch. */
  async alone<T>(what: 'connect' | 'disconnect', run: () => Promise<T>): Promise<T> {
    this.changing = what;
    if (what === 'disconnect') this.epoch++;
    try {
      return await run();
    } finally {
      this.changing = null;
    }
  }

  /** Refuses a connect or disconnect while one of them runs. */
  exclusive(what: 'connect' | 'disconnect'): void {
    if (this.changing === null) return;
    const running = this.changing === 'connect' ? 'a cloud connect' : 'a cloud disconnect';
    const then =
      this.changing === 'connect'
        ? 'once it has finished, see cloud status (disconnect then if you want another gateway)'
        : 'once it has finished';
    throw new GatehouseError(
      'conflict',
      `${running} is in progress (from the console, the tray or the CLI): ${what} again ${then}`,
    );
  }

  /** An activate, deactivate or sync does not start while a disconnect runs (it would start on the identity being dropped). */
  notDisconnecting(what: string): void {
    if (this.changing === 'disconnect')
      throw new GatehouseError('conflict', `a cloud disconnect is in progress: ${what} was not started`);
  }

  /** An operation that began before a disconnect stops here instead of writing into the disconnected state. */
  still(epoch: number, what: string): void {
    if (this.epoch !== epoch)
      throw new GatehouseError(
        'conflict',
        `the site was disconnected while ${what} ran: nothing of its answer was kept`,
      );
  }
}
