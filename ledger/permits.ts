/**
 * A fixed number of permits shared by several loops, handed out in the order they were asked for. `take` waits for
 * one; `tryTake` takes one only if one is free and nobody is waiting (so a loop that holds some cannot overtake one
 * that holds none); `release` gives permits back, to the longest waiting first.
 */
export class Permits {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  readonly size: number;

  constructor(size: number) {
    this.size = size;

    this.free = size;
  }

  get available(): number {
    return this.free;
  }

  tryTake(): boolean {
    if (this.free === 0 || this.waiting.length > 0) return false;
    this.free--;
    return true;
  }

  take(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(count = 1): void {
    this.free += count;
    while (this.free > 0 && this.waiting.length > 0) {
      this.free--;
      (this.waiting.shift() as () => void)();
    }
  }
}
