/**
 * What a worker's loop waits on when it has nothing to do: news (`wake`, e.g. a projection's progress) or the poll
 * interval, whichever comes first. A wake with nobody waiting is kept for the next wait, so news is never missed.
 */
export class WakeUp {
  private woken = false;
  private resolveIdle?: () => void;

  wait(pollMs: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(this.wake, pollMs);
      this.resolveIdle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  readonly wake = (): void => {
    const resolve = this.resolveIdle;
    this.resolveIdle = undefined;
    if (resolve) resolve();
    else this.woken = true;
  };
}
