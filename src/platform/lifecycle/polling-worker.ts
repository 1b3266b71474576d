import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';

/**
 * A background loop for work claimed from the database: runs `pollOnce` until it reports less
 * than a full batch (pausing `busyDelayMs` between rounds), then sleeps `intervalMs`. One round at a time; shutdown waits for the
 * round in progress, so a batch is never abandoned half-done by a clean stop.
 */
export abstract class PollingWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected abstract readonly logger: Logger;
  private running = false;
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;

  protected abstract get intervalMs(): number;
  /** Pause between rounds while there is more work: 0 unless the work must leave room for others. */
  protected get busyDelayMs(): number {
    return 0;
  }
  /** Should this instance run the loop at all. */
  protected get enabled(): boolean {
    return true;
  }
  /** One round; true when there may be more work right away. */
  protected abstract pollOnce(): Promise<boolean>;

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.running = true;
    this.schedule(0);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /**
   * No new round; resolves when the one in progress has ended. A round is bounded: its queries by
   * the database query timeout, its calls out by their own timeouts.
   */
  async stop(): Promise<boolean> {
    const wasRunning = this.running;
    this.running = false;
    clearTimeout(this.timer);
    await this.round;
    if (wasRunning) this.logger.log('stopped after its current round');
    return wasRunning;
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.round = this.runRound();
    }, delayMs);
  }

  private async runRound(): Promise<void> {
    let more = false;
    try {
      more = await this.pollOnce();
    } catch (error) {
      this.logger.error(`round failed: ${(error as Error).message}`);
    }
    this.schedule(more ? this.busyDelayMs : this.intervalMs);
  }
}
