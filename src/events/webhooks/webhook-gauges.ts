import { Injectable, Type } from '@nestjs/common';
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

/** One endpoint's figure: the `endpoint` label and the gauge's value. */
type EndpointValue = [endpoint: string | number, value: number];

/**
 * What the webhook gauges read, each within the scrape bound. Pending deliveries of the enabled
 * endpoints (a disabled endpoint's wait is the disabled alert's business) are read once per scrape:
 * the pending and oldest-age gauges collect together and share the one read.
 */
@Injectable()
export class WebhookGaugeReadings {
  private pendingInFlight?: Promise<PendingRow[]>;

  constructor(private readonly reporting: ReportingDatabase) {}

  pending(): Promise<PendingRow[]> {
    this.pendingInFlight ??= scrapeQuery<PendingRow>(
      this.reporting,
      `SELECT d.endpoint_id, COUNT(*) AS pending, MIN(d.created_at) AS oldest
       FROM webhook_delivery d JOIN webhook_endpoint e ON e.id = d.endpoint_id AND e.enabled = 1
       WHERE d.status = ? GROUP BY d.endpoint_id`,
      [DeliveryStatus.Pending],
    ).finally(() => (this.pendingInFlight = undefined));
    return this.pendingInFlight;
  }

  async failed(): Promise<EndpointValue[]> {
    const rows = await scrapeQuery<{ endpoint_id: string; failed: number }>(
      this.reporting,
      `SELECT e.id AS endpoint_id,
              (SELECT COUNT(*) FROM webhook_delivery d WHERE d.endpoint_id = e.id AND d.status = ?) AS failed
       FROM webhook_endpoint e`,
      [DeliveryStatus.Failed],
    );
    return rows.map((r) => [r.endpoint_id, Number(r.failed)]);
  }

  async disabled(): Promise<EndpointValue[]> {
    const rows = await scrapeQuery<{ id: string; disabled: number }>(
      this.reporting,
      `SELECT id, enabled = 0 AND disabled_reason IS NOT NULL AS disabled FROM webhook_endpoint`,
    );
    return rows.map((r) => [r.id, Number(r.disabled)]);
  }
}

/** A gauge labelled by endpoint, read at scrape time through WebhookGaugeReadings. */
function endpointGauge(
  name: string,
  metric: string,
  read: (readings: WebhookGaugeReadings) => Promise<EndpointValue[]>,
): Type<ScrapeTimeGauge> {
  @Injectable()
  class EndpointGauge extends ScrapeTimeGauge {
    constructor(
      @InjectMetric(metric) gauge: Gauge<string>,
      private readonly readings: WebhookGaugeReadings,
    ) {
      super(gauge);
    }

    protected async read(): Promise<GaugeSample[]> {
      const values = await read(this.readings);
      return values.map(([endpoint, value]) => [{ endpoint: String(endpoint) }, value]);
    }
  }
  // ScrapeTimeGauge tells its kinds (and its log lines) apart by the class name.
  Object.defineProperty(EndpointGauge, 'name', { value: name });
  return EndpointGauge;
}

const secondsSince = (at: Date | string, now: number) => Math.max(0, Math.round((now - new Date(at).getTime()) / 1000));

export const WEBHOOK_GAUGES = [
  WebhookGaugeReadings,
  endpointGauge('WebhookPendingMetric', WEBHOOK_PENDING_DELIVERIES, async (readings) =>
    (await readings.pending()).map((r): EndpointValue => [r.endpoint_id, Number(r.pending)]),
  ),
  endpointGauge('WebhookOldestPendingMetric', WEBHOOK_OLDEST_PENDING_AGE, async (readings) => {
    const rows = await readings.pending();
    const now = Date.now();
    return rows.map((r): EndpointValue => [r.endpoint_id, secondsSince(r.oldest, now)]);
  }),
  endpointGauge('WebhookFailedMetric', WEBHOOK_FAILED_DELIVERIES, (readings) => readings.failed()),
  endpointGauge('WebhookDisabledEndpointsMetric', WEBHOOK_ENDPOINTS_DISABLED, (readings) => readings.disabled()),
];
