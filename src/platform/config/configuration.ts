import { loadOrderConfig } from './order.config';
import { loadRetentionConfig } from './retention.config';
import { loadRefusedNotificationsConfig } from './refused-notifications.config';
import { loadSpoolConfig } from './spool.config';
import { loadRedisConfig } from './redis.config';
import { loadReconciliationConfig } from './reconciliation.config';
import { loadAdminOperators } from './admin.config';
import { CHANNEL_CONFIGURATION } from '../../channels/registered-channels';
import { loadConsoleConfig } from './console.config';
import { loadDatabaseConfig } from './database.config';
import { loadEventsConfig } from './events.config';
import { loadLogLevel } from './logging.config';
import { loadPaymentQueryConfig } from './payment-query.config';
import { loadRefundConfig } from './refund.config';
import { loadServerConfig } from './server.config';
import { loadWebhooksConfig } from './webhooks.config';
import { ConfigurationError } from '../../domain/env-validation';

const NAMESPACES: Array<(env: NodeJS.ProcessEnv) => unknown> = [
  loadServerConfig,
  loadLogLevel,
  loadDatabaseConfig,
  loadEventsConfig,
  loadWebhooksConfig,
  ...CHANNEL_CONFIGURATION,
  loadRefundConfig,
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
