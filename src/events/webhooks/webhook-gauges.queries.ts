import { Injectable } from '@nestjs/common';
import { ReportingDatabase } from '../../platform/database/reporting-database';
import { scrapeQuery } from '../../platform/database/scrape-query';
import { DeliveryStatus } from './webhook-delivery.entity';

export interface PendingRow {
  endpoint_id: string;
  pending: string | number;
  oldest: Date | string;
}

/** One endpoint's figure: the `endpoint` label and the gauge's value. */
export type EndpointValue = [endpoint: string | number, value: number];

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
