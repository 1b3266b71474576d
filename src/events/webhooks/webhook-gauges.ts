import { Injectable, Type } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import { Gauge } from 'prom-client';
import {
  WEBHOOK_ENDPOINTS_DISABLED,
  WEBHOOK_FAILED_DELIVERIES,
  WEBHOOK_OLDEST_PENDING_AGE,
  WEBHOOK_PENDING_DELIVERIES,
} from '../../platform/metrics/metrics.module';
import { GaugeSample, ScrapeTimeGauge } from '../../platform/metrics/scrape-time-gauge';
import { EndpointValue, WebhookGaugeReadings } from './webhook-gauges.queries';

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
