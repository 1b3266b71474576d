import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DeliverySpool } from './delivery-spool';

@Injectable()
export class SpoolHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly spool: DeliverySpool,
  ) {}

  /** Always up: a spool that holds deliveries is for alerts, never a reason to take traffic away. */
  report(): HealthIndicatorResult {
    const indicator = this.indicators.check('spool');
    if (!this.spool.enabled) return indicator.up({ mode: 'disabled (SPOOL_DIR not set)' });
    return indicator.up({ ...this.spool.stats() });
  }
}
