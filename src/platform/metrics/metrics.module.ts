import { Global, Module } from '@nestjs/common';
import {
  getToken,
  makeCounterProvider,
  makeGaugeProvider,
  makeHistogramProvider,
  PrometheusModule,
} from '@willsoto/nestjs-prometheus';
import { ConfigModule } from '@nestjs/config';
import { register } from 'prom-client';
import { serverConfig } from '../config/server.config';
import { MetricsServer } from './metrics-server';

export const NOTIFICATIONS_TOTAL = 'payment_notifications_total';
export const NOTIFICATION_SECONDS = 'payment_notification_duration_seconds';
export const REFUND_CALLS_TOTAL = 'refund_channel_calls_total';
export const CHANNEL_CALLS_TOTAL = 'payment_channel_calls_total';
export const REFUNDS_UNSETTLED = 'refunds_unsettled';
export const BROKER_CONNECTED = 'rabbitmq_connected';
export const RETENTION_PRUNED_TOTAL = 'retention_pruned_rows_total';
export const RECONCILIATION_DISCREPANCIES = 'reconciliation_discrepancies';
export const WEBHOOK_ATTEMPTS_TOTAL = 'webhook_attempts_total';
export const WEBHOOK_ENDPOINTS_DISABLED_TOTAL = 'webhook_endpoints_disabled_total';
export const WEBHOOK_PENDING_DELIVERIES = 'webhook_pending_deliveries';
export const WEBHOOK_OLDEST_PENDING_AGE = 'webhook_oldest_pending_age_seconds';
export const WEBHOOK_FAILED_DELIVERIES = 'webhook_failed_deliveries';
export const WEBHOOK_ENDPOINTS_DISABLED = 'webhook_endpoints_disabled_for_failing';
export const CREDENTIAL_FILES_REFUSED = 'payment_credential_files_refused';
export const CREDENTIAL_RELOADS_TOTAL = 'payment_credential_reloads_total';
export const CREDENTIAL_EXPIRY = 'payment_credential_expiry_seconds';
export const DIRECTORY_ACCOUNTS_LEFT_OUT = 'payment_directory_accounts_left_out';

@Global()
@Module({
  imports: [
    ConfigModule.forFeature(serverConfig),
    PrometheusModule.register({
      path: '/metrics',
      // Process metrics are registered once per process (tests run two apps in one process).
      defaultMetrics: { enabled: register.getSingleMetric('process_cpu_user_seconds_total') === undefined },
    }),
  ],
  providers: [
    MetricsServer,
    makeCounterProvider({
      name: NOTIFICATIONS_TOTAL,
      help:
        'Platform notifications answered, by channel and outcome (PAID, DUPLICATE, NOT_PAYING, an anomaly type, a refund outcome; ' +
        'REFUSED for a notification that must not be trusted or is malformed, FAILED for a transient failure), with the error code as reason',
      labelNames: ['channel', 'outcome', 'reason'],
    }),
    makeHistogramProvider({
      name: NOTIFICATION_SECONDS,
      help: 'Time from a verified notification to its committed outcome',
      labelNames: ['channel'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    }),
    makeCounterProvider({
      name: REFUND_CALLS_TOTAL,
      help: 'Calls to a channel about refunds, by channel, request (refund, query) and outcome (SUCCEEDED, PROCESSING, CLOSED, ABNORMAL, NOT_REFUNDED, RETRY)',
      labelNames: ['channel', 'request', 'outcome'],
    }),
    makeCounterProvider({
      name: CHANNEL_CALLS_TOTAL,
      help: 'Trade queries and closes at a channel, by channel, request (QUERY, CLOSE) and outcome (PAID, NOT_PAID, NOT_FOUND, FOREIGN, FAILED, CLOSED)',
      labelNames: ['channel', 'request', 'outcome'],
    }),
    makeGaugeProvider({
      name: REFUNDS_UNSETTLED,
      help: 'Refunds that need a person: ABNORMAL, or PENDING/PROCESSING for longer than REFUND_PROCESSING_MAX_AGE_SECONDS, by channel and status',
      labelNames: ['channel', 'status'],
    }),
    makeGaugeProvider({
      name: BROKER_CONNECTED,
      help: '1 while the RabbitMQ connection is up, 0 while it is lost (absent in the embedded mode); never affects readiness',
    }),
    makeCounterProvider({
      name: RETENTION_PRUNED_TOTAL,
      help: 'Rows pruned by retention, by table (callback_delivery: raw bytes emptied; outbox_event, processed_event: deleted)',
      labelNames: ['table'],
    }),
    makeGaugeProvider({
      name: RECONCILIATION_DISCREPANCIES,
      help:
        'Discrepancies found by the latest completed reconciliation of an account (latest bill date), read from the database at scrape time, ' +
        'by channel, merchant_id and outcome (MISSING_LOCAL, MISSING_CHANNEL, AMOUNT_DIFFERS, REFUND_MISSING_LOCAL, REFUND_MISSING_CHANNEL, MALFORMED)',
      labelNames: ['channel', 'merchant_id', 'outcome'],
    }),
    makeCounterProvider({
      name: WEBHOOK_ATTEMPTS_TOTAL,
      help: 'Webhook attempts, by endpoint id and outcome (succeeded: a 2xx within WEBHOOK_TIMEOUT_MS; failed: anything else)',
      labelNames: ['endpoint', 'outcome'],
    }),
    makeCounterProvider({
      name: WEBHOOK_ENDPOINTS_DISABLED_TOTAL,
      help: 'Webhook endpoints this instance disabled because every attempt failed for WEBHOOK_DISABLE_AFTER_SECONDS, by endpoint id',
      labelNames: ['endpoint'],
    }),
    makeGaugeProvider({
      name: WEBHOOK_PENDING_DELIVERIES,
      help: 'Webhook deliveries not yet accepted and still to be attempted, by enabled endpoint id, read from the database at scrape time',
      labelNames: ['endpoint'],
    }),
    makeGaugeProvider({
      name: WEBHOOK_OLDEST_PENDING_AGE,
      help: 'Age of the oldest pending webhook delivery, by enabled endpoint id (absent when none), read at scrape time',
      labelNames: ['endpoint'],
    }),
    makeGaugeProvider({
      name: WEBHOOK_FAILED_DELIVERIES,
      help: 'Webhook deliveries FAILED after the last attempt of the retry schedule (until resent or recovered), by endpoint id, read at scrape time',
      labelNames: ['endpoint'],
    }),
    makeGaugeProvider({
      name: WEBHOOK_ENDPOINTS_DISABLED,
      help: 'Webhook endpoints disabled because every attempt failed for WEBHOOK_DISABLE_AFTER_SECONDS (1 each, by endpoint id), read at scrape time',
      labelNames: ['endpoint'],
    }),
    makeGaugeProvider({
      name: CREDENTIAL_FILES_REFUSED,
      help:
        "1 while a channel's key or certificate files changed on disk to a version this instance refused (it keeps the keys it had, " +
        'and a restart would fail), 0 once a valid version is applied; by channel',
      labelNames: ['channel'],
    }),
    makeGaugeProvider({
      name: DIRECTORY_ACCOUNTS_LEFT_OUT,
      help:
        'Accounts added through the merchant directory that this instance left out (their secret did not decrypt: ' +
        'a key id not in MERCHANT_SECRETS_KEYS_FILE, a tampered row; or the channel refused the account); by channel',
      labelNames: ['channel'],
    }),
    makeCounterProvider({
      name: CREDENTIAL_RELOADS_TOTAL,
      help: "Re-reads of a channel's key and certificate files after they changed on disk, by channel and outcome (applied, refused)",
      labelNames: ['channel', 'outcome'],
    }),
    makeGaugeProvider({
      name: CREDENTIAL_EXPIRY,
      help:
        'When the certificates of an account stop being valid, Unix seconds, by channel, account (merchant or app id; empty for a ' +
        "channel-wide chain) and kind (the option naming the file: platformCert, publicCert, rootCert, appCert, signCert, middleCert); the latest of a kind's certificates",
      labelNames: ['channel', 'account', 'kind'],
    }),
  ],
  exports: [
    getToken(NOTIFICATIONS_TOTAL),
    getToken(NOTIFICATION_SECONDS),
    getToken(REFUND_CALLS_TOTAL),
    getToken(CHANNEL_CALLS_TOTAL),
    getToken(REFUNDS_UNSETTLED),
    getToken(BROKER_CONNECTED),
    getToken(RETENTION_PRUNED_TOTAL),
    getToken(RECONCILIATION_DISCREPANCIES),
    getToken(WEBHOOK_ATTEMPTS_TOTAL),
    getToken(WEBHOOK_ENDPOINTS_DISABLED_TOTAL),
    getToken(WEBHOOK_PENDING_DELIVERIES),
    getToken(WEBHOOK_OLDEST_PENDING_AGE),
    getToken(WEBHOOK_FAILED_DELIVERIES),
    getToken(WEBHOOK_ENDPOINTS_DISABLED),
    getToken(CREDENTIAL_FILES_REFUSED),
    getToken(CREDENTIAL_RELOADS_TOTAL),
    getToken(CREDENTIAL_EXPIRY),
    getToken(DIRECTORY_ACCOUNTS_LEFT_OUT),
  ],
})
export class MetricsModule {}
