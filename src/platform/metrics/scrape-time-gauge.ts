import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Gauge, LabelValues } from 'prom-client';

export type GaugeSample = [labels: LabelValues<string>, value: number];

/**
 * A labelled gauge read from the database when Prometheus scrapes, so that every replica reports
 * the same figures and a restart loses none. When the read fails the gauge is left out of that
 * scrape, as the database gauges are; the scrape itself still answers. prom-client's gauge is one
 * per process and tests run several apps in one: the latest app still running reads it, a closed
 * one never does.
 */
export abstract class ScrapeTimeGauge implements OnModuleInit, OnModuleDestroy {
  private static readonly running = new Map<string, ScrapeTimeGauge[]>();
  private readonly logger = new Logger(this.constructor.name);

  constructor(private readonly gauge: Gauge<string>) {}

  /** The gauge's samples, read from the database within the scrape bound (scrapeQuery). */
  protected abstract read(): Promise<GaugeSample[]>;

  onModuleInit(): void {
    const running = this.runningOfMyKind();
    running.push(this);
    Object.assign(this.gauge, { collect: () => running.at(-1)?.collect() });
  }

  onModuleDestroy(): void {
    const running = this.runningOfMyKind();
    running.splice(running.indexOf(this), 1);
  }

  private async collect(): Promise<void> {
    let samples: GaugeSample[] = [];
    try {
      samples = await this.read();
    } catch (error) {
      this.logger.warn(`reading the gauge from the database failed: ${(error as Error).message}`);
    }
    this.gauge.reset();
    for (const [labels, value] of samples) this.gauge.set(labels, value);
  }

  private runningOfMyKind(): ScrapeTimeGauge[] {
    const kind = this.constructor.name;
    const { running } = ScrapeTimeGauge;
    if (!running.has(kind)) running.set(kind, []);
    return running.get(kind)!;
  }
}
