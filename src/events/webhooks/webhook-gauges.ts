import { Injectable } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import { ReportingDatabase } from '../../platform/database/reporting-database';
import {
  WEBHOOK_ENDPOINTS_DISABLED,
  WEBHOOK_FAILED_DELIVERIES,
  WEBHOOK_OLDEST_PENDING_AGE,
  WEBHOOK_PENDING_DELIVERIES,
} from '../../platform/metrics/metrics.module';
import { scrapeQuery } from '../../platform/metrics/scrape-query';
import { GaugeSample, ScrapeTimeGauge } from '../../platform/metrics/scrape-time-gauge';
import { DeliveryStatus } from './webhook-delivery.entity';

interface PendingRow {
  endpoint_id: string;
  pending: string | number;
  oldest: Date | string;
}

/**
 * Pending deliveries of the enabled endpoints (a disabled endpoint's wait is the disabled alert's
 * business), read once per scrape: the pending and oldest-age gauges collect together and share it.
 */
@Injectable()
export class PendingDeliveriesReading {
  private inFlight?: Promise<PendingRow[]>;

  constructor(private readonly reporting: ReportingDatabase) {}

  read(): Promise<PendingRow[]> {
    this.inFlight ??= scrapeQuery<PendingRow>(
      this.reporting,
      `SELECT d.endpoint_id, COUNT(*) AS pending, MIN(d.created_at) AS oldest
       FROM webhook_delivery d JOIN webhook_endpoint e ON e.id = d.endpoint_id AND e.enabled = 1
       WHERE d.status = ? GROUP BY d.endpoint_id`,
      [DeliveryStatus.Pending],
    ).finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }
}

@Injectable()
export class WebhookPendingMetric extends ScrapeTimeGauge {
  constructor(
    @InjectMetric(WEBHOOK_PENDING_DELIVERIES) gauge: Gauge<string>,
    private readonly pending: PendingDeliveriesReading,
  ) {
    super(gauge);
  }

  protected async read(): Promise<GaugeSample[]> {
    const rows = await this.pending.read();
    return rows.map((r) => [{ endpoint: String(r.endpoint_id) }, Number(r.pending)]);
  }
}

@Injectable()
export class WebhookOldestPendingMetric extends ScrapeTimeGauge {
  constructor(
    @InjectMetric(WEBHOOK_OLDEST_PENDING_AGE) gauge: Gauge<string>,
    private readonly pending: PendingDeliveriesReading,
  ) {
    super(gauge);
  }

  protected async read(): Promise<GaugeSample[]> {
    const rows = await this.pending.read();
    const now = Date.now();
    return rows.map((r) => [
      { endpoint: String(r.endpoint_id) },
      Math.max(0, Math.round((now - new Date(r.oldest).getTime()) / 1000)),
    ]);
  }
}

@Injectable()
export class WebhookFailedMetric extends ScrapeTimeGauge {
  constructor(
    @InjectMetric(WEBHOOK_FAILED_DELIVERIES) gauge: Gauge<string>,
    private readonly reporting: ReportingDatabase,
  ) {
    super(gauge);
  }

  protected async read(): Promise<GaugeSample[]> {
    const rows = await scrapeQuery<{ endpoint_id: string; failed: number }>(
      this.reporting,
      `SELECT e.id AS endpoint_id,
              (SELECT COUNT(*) FROM webhook_delivery d WHERE d.endpoint_id = e.id AND d.status = ?) AS failed
       FROM webhook_endpoint e`,
      [DeliveryStatus.Failed],
    );
    return rows.map((r) => [{ endpoint: String(r.endpoint_id) }, Number(r.failed)]);
  }
}

@Injectable()
export class WebhookDisabledEndpointsMetric extends ScrapeTimeGauge {
  constructor(
    @InjectMetric(WEBHOOK_ENDPOINTS_DISABLED) gauge: Gauge<string>,
    private readonly reporting: ReportingDatabase,
  ) {
    super(gauge);
  }

  protected async read(): Promise<GaugeSample[]> {
    const rows = await scrapeQuery<{ id: string; disabled: number }>(
      this.reporting,
      `SELECT id, enabled = 0 AND disabled_reason IS NOT NULL AS disabled FROM webhook_endpoint`,
    );
    return rows.map((r) => [{ endpoint: String(r.id) }, Number(r.disabled)]);
  }
}

export const WEBHOOK_GAUGES = [
  PendingDeliveriesReading,
  WebhookPendingMetric,
  WebhookOldestPendingMetric,
  WebhookFailedMetric,
  WebhookDisabledEndpointsMetric,
];
