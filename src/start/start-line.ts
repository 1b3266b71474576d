import { INestApplicationContext } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { PaymentChannels } from '../channels/payment-channels';
import { serverConfig } from '../platform/config/server.config';
import { webhooksConfig } from '../events/webhooks/webhooks.config';
import { RabbitmqConnection } from '../events/rabbitmq/rabbitmq.connection';
import { SERVICE_VERSION } from '../platform/lifecycle/service-version';

export interface ChannelSummary {
  /** The channel's merchant or app ids. */
  accounts: string[];
  /** The platform keys' ids (public key ids, certificate serials), where the channel's keys have ids. */
  keyIds: string[];
  /** The accounts whose API (refunds, queries, closes) can be called. */
  refunds: string[];
  /** Checks an operator waived (ALIPAY_SELLER_CHECK_WAIVED), named so that nobody misses them. */
  waived?: string[];
}

export interface StartSummary {
  msg: string;
  version: string;
  port: number;
  metricsPort: number;
  channels: Record<string, ChannelSummary | 'disabled'>;
  events: string;
  exampleHandlers: boolean;
}

/**
 * What an operator wants to see once at start: where it listens (the API and the probes' status on
 * `port`; /metrics and the readiness report on the management port), what it accepts, what it can
 * do, where events go.
 */
export function startSummary(app: INestApplicationContext, port: number, metricsPort: number): StartSummary {
  const channels = Object.fromEntries(
    app.get(PaymentChannels, { strict: false }).all.map((c): [string, ChannelSummary | 'disabled'] => {
      const name = c.channel.toLowerCase();
      if (!c.enabled) return [name, 'disabled' as const];
      const waived = c.waivedChecks?.() ?? [];
      const summary = { accounts: c.accountIds(), keyIds: c.keyIds(), refunds: c.apiAccounts() };
      return [name, waived.length > 0 ? { ...summary, waived } : summary];
    }),
  );
  const rabbitmq = app.get(RabbitmqConnection, { strict: false });
  const events = rabbitmq.destination ?? 'in-process handlers (RABBITMQ_URL not set)';
  const exampleHandlers = app.get<ConfigType<typeof serverConfig>>(serverConfig.KEY, { strict: false }).exampleHandlers;
  const metricsText = `, /metrics and the readiness report on management port ${metricsPort}`;
  const examplesText = exampleHandlers ? '; EXAMPLE HANDLERS ON (fake points, coupons, shipments)' : '';
  const webhooksText = app.get<ConfigType<typeof webhooksConfig>>(webhooksConfig.KEY, { strict: false })
    .allowPrivateUrls
    ? '; WEBHOOKS MAY CALL PRIVATE ADDRESSES AND http:// (WEBHOOK_ALLOW_PRIVATE_URLS=true)'
    : '';
  return {
    msg:
      `started on port ${port} (version ${SERVICE_VERSION})${metricsText}; channels: ${describeChannels(channels)}; ` +
      `events: ${events}${examplesText}${webhooksText}`,
    version: SERVICE_VERSION,
    port,
    metricsPort,
    channels,
    events,
    exampleHandlers,
  };
}

function describeChannels(channels: StartSummary['channels']): string {
  return Object.entries(channels)
    .map(([name, c]) => {
      if (c === 'disabled') return `${name} disabled`;
      const keys = c.keyIds.length > 0 ? `, keys ${c.keyIds.join(' ')}` : '';
      const refunds = c.refunds.length > 0 ? `refunds for ${c.refunds.join(' ')}` : 'refunds unavailable';
      const waived = c.waived ? `; WAIVED: ${c.waived.join(', ')}` : '';
      return `${name} (accounts ${c.accounts.join(' ')}${keys}; ${refunds}${waived})`;
    })
    .join(', ');
}
