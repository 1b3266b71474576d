import { loadOrderConfig } from '../order/order.config';
import { loadRetentionConfig } from '../platform/config/retention.config';
import { loadRefusedNotificationsConfig } from '../payments/refused-notification/refused-notifications.config';
import { loadSpoolConfig } from '../platform/config/spool.config';
import { loadRedisConfig } from '../payments/idempotency/redis.config';
import { loadReconciliationConfig } from '../reconciliation/reconciliation.config';
import { loadAdminOperators } from '../operators/admin.config';
import { CHANNEL_CONFIGURATION } from '../channels/registered-channels';
import { loadConsoleConfig } from '../admin/console/console.config';
import { loadDatabaseConfig } from '../platform/config/database.config';
import { loadEventsConfig } from '../events/events.config';
import { loadLogLevel } from '../platform/config/logging.config';
import { loadPaymentQueryConfig } from '../order/payment-query.config';
import { loadRefundConfig } from '../refund/refund.config';
import { loadFourEyesConfig } from '../operators/four-eyes.config';
import { loadServerConfig } from '../platform/config/server.config';
import { loadWebhooksConfig } from '../events/webhooks/webhooks.config';
import { ConfigurationError } from '../platform/config/env-validation';

const NAMESPACES: Array<(env: NodeJS.ProcessEnv) => unknown> = [
  loadServerConfig,
  loadLogLevel,
  loadDatabaseConfig,
  loadEventsConfig,
  loadWebhooksConfig,
  ...CHANNEL_CONFIGURATION,
  loadRefundConfig,
  loadFourEyesConfig,
  loadPaymentQueryConfig,
  loadAdminOperators,
  loadOrderConfig,
  loadRetentionConfig,
  loadRefusedNotificationsConfig,
  loadSpoolConfig,
  loadReconciliationConfig,
  loadRedisConfig,
  loadConsoleConfig,
];

/**
 * Validates every namespace before anything starts, so that all mistakes are reported together,
 * once, and never from inside the framework's start-up.
 */
export function validateConfiguration(env: NodeJS.ProcessEnv = process.env): void {
  const problems = NAMESPACES.flatMap((load) => {
    try {
      load(env);
      return [];
    } catch (error) {
      if (error instanceof ConfigurationError) return error.problems;
      throw error;
    }
  });
  // Several channels read the one accounts file: its mistake is said once.
  const distinct = [...new Set(problems)];
  if (distinct.length > 0) throw new ConfigurationError(`Invalid configuration: ${distinct.join('; ')}`, distinct);
}
