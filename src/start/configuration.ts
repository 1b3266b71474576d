import { loadOrderConfig, orderConfig } from '../order/order.config';
import { loadRetentionConfig, retentionConfig } from '../platform/config/retention.config';
import {
  loadRefusedNotificationsConfig,
  refusedNotificationsConfig,
} from '../payments/refused-notification/refused-notifications.config';
import { loadSpoolConfig, spoolConfig } from '../platform/config/spool.config';
import { loadRedisConfig, redisConfig } from '../payments/idempotency/redis.config';
import { loadReconciliationConfig, reconciliationConfig } from '../reconciliation/reconciliation.config';
import { adminConfig, loadAdminConfig } from '../operators/admin.config';
import { CHANNEL_CONFIGURATION } from '../channels/registered-channels';
import { loadConsoleConfig } from '../admin/console/console.config';
import { databaseConfig, loadDatabaseConfig } from '../platform/config/database.config';
import { eventsConfig, loadEventsConfig } from '../events/events.config';
import { loadLogLevel } from '../platform/config/logging.config';
import { loadPaymentQueryConfig, paymentQueryConfig } from '../order/payment-query.config';
import { loadRefundConfig, refundConfig } from '../refund/refund.config';
import { fourEyesConfig, loadFourEyesConfig } from '../operators/four-eyes.config';
import { loadServerConfig, serverConfig } from '../platform/config/server.config';
import { loadWebhooksConfig, webhooksConfig } from '../events/webhooks/webhooks.config';
import { loadMerchantSecretsConfig, merchantSecretsConfig } from '../payments/merchants/merchant-secrets.config';
import { ConfigurationError, ConfigurationPart } from '../platform/config/env-validation';

/**
 * The whole configuration, each part read by its own loader: what start-up validates, and what the
 * medium tests build their modules' configuration namespaces from (test/support/medium.ts).
 */
export const CONFIGURATION: readonly ConfigurationPart[] = [
  { token: serverConfig.KEY, load: loadServerConfig },
  { load: loadLogLevel },
  { token: databaseConfig.KEY, load: loadDatabaseConfig },
  { token: eventsConfig.KEY, load: loadEventsConfig },
  { token: webhooksConfig.KEY, load: loadWebhooksConfig },
  ...CHANNEL_CONFIGURATION,
  { token: refundConfig.KEY, load: loadRefundConfig },
  { token: fourEyesConfig.KEY, load: loadFourEyesConfig },
  { token: paymentQueryConfig.KEY, load: loadPaymentQueryConfig },
  { token: adminConfig.KEY, load: loadAdminConfig },
  { token: merchantSecretsConfig.KEY, load: loadMerchantSecretsConfig },
  { token: orderConfig.KEY, load: loadOrderConfig },
  { token: retentionConfig.KEY, load: loadRetentionConfig },
  { token: refusedNotificationsConfig.KEY, load: loadRefusedNotificationsConfig },
  { token: spoolConfig.KEY, load: loadSpoolConfig },
  { token: reconciliationConfig.KEY, load: loadReconciliationConfig },
  { token: redisConfig.KEY, load: loadRedisConfig },
  { load: loadConsoleConfig },
];

/**
 * Validates every namespace before anything starts, so that all mistakes are reported together,
 * once, and never from inside the framework's start-up.
 */
export function validateConfiguration(env: NodeJS.ProcessEnv = process.env): void {
  const problems = CONFIGURATION.flatMap(({ load }) => {
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
