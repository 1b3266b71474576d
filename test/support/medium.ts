/**
 * The middle tier: the service's real modules, with their real repositories, on the run's test
 * database, without HTTP (no Fastify, no routes, no guards). Configuration is passed explicitly, as
 * a plain map read by the same loaders the app uses; nothing here reads or changes `process.env`
 * but for the run's DATABASE_URL, which global-setup puts there.
 */
import { DynamicModule, ForwardReference, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { ConfigModule, getConfigToken } from '@nestjs/config';
import { Test, TestingModule } from '@nestjs/testing';
import { ClsService } from 'nestjs-cls';
import { CHANNEL_REGISTRATIONS } from '../../src/channels/registered-channels';
import { channelCallsConfig, loadChannelCallsConfig } from '../../src/channels/channel-calls.config';
import { adminConfig, loadAdminConfig } from '../../src/operators/admin.config';
import { databaseConfig, loadDatabaseConfig } from '../../src/platform/config/database.config';
import { eventsConfig, loadEventsConfig } from '../../src/events/events.config';
import { loadOrderConfig, orderConfig } from '../../src/order/order.config';
import { loadPaymentQueryConfig, paymentQueryConfig } from '../../src/order/payment-query.config';
import { loadRedisConfig, redisConfig } from '../../src/payments/idempotency/redis.config';
import { loadRefundConfig, refundConfig } from '../../src/refund/refund.config';
import { fourEyesConfig, loadFourEyesConfig } from '../../src/operators/four-eyes.config';
import { loadReconciliationConfig, reconciliationConfig } from '../../src/reconciliation/reconciliation.config';
import { loadServerConfig, serverConfig } from '../../src/platform/config/server.config';
import { loadSpoolConfig, spoolConfig } from '../../src/platform/config/spool.config';
import { AppModule } from '../../src/app.module';
import { DatabaseModule } from '../../src/platform/database/database.module';
import { MetricsModule } from '../../src/platform/metrics/metrics.module';
import { RabbitmqModule } from '../../src/events/rabbitmq/rabbitmq.module';
import { TransactionModule } from '../../src/platform/transaction/transaction.module';
import { assertTestDatabase } from './test-database';
import {
  loadRefusedNotificationsConfig,
  refusedNotificationsConfig,
} from '../../src/payments/refused-notification/refused-notifications.config';
import { loadRetentionConfig, retentionConfig } from '../../src/platform/config/retention.config';
import { loadWebhooksConfig, webhooksConfig } from '../../src/events/webhooks/webhooks.config';
import { NO_PLATFORM_API } from './test-app';

type Import = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

/** The development machine's MariaDB is shared; a stall there should not fail a test about something else. */
const SHARED_MACHINE_BOUNDS = { DATABASE_QUERY_TIMEOUT_MS: '30000', DATABASE_POOL_ACQUIRE_TIMEOUT_MS: '30000' };

/** Every configuration namespace the features read, each built by the app's own loader from `env`. */
function configurations(env: NodeJS.ProcessEnv): Array<[string | symbol, unknown]> {
  return [
    [serverConfig.KEY, loadServerConfig(env)],
    [databaseConfig.KEY, loadDatabaseConfig(env)],
    [eventsConfig.KEY, loadEventsConfig(env)],
    [refundConfig.KEY, loadRefundConfig(env)],
    [fourEyesConfig.KEY, loadFourEyesConfig(env)],
    [orderConfig.KEY, loadOrderConfig(env)],
    [paymentQueryConfig.KEY, loadPaymentQueryConfig(env)],
    [spoolConfig.KEY, loadSpoolConfig(env)],
    [redisConfig.KEY, loadRedisConfig(env)],
    [adminConfig.KEY, loadAdminConfig(env)],
    [channelCallsConfig.KEY, loadChannelCallsConfig(env)],
    [reconciliationConfig.KEY, loadReconciliationConfig(env)],
    ...CHANNEL_REGISTRATIONS.map((r): [string | symbol, unknown] => [
      getConfigToken(`channel.${r.channel}`),
      r.loadOptions(env),
    ]),
    [refusedNotificationsConfig.KEY, loadRefusedNotificationsConfig(env)],
    [retentionConfig.KEY, loadRetentionConfig(env)],
    [webhooksConfig.KEY, loadWebhooksConfig(env)],
  ];
}

export interface MediumContext {
  module: TestingModule;
  get<T>(type: Type<T>): T;
  /** Runs `fn` in a CLS context of its own, as a job outside a request does (@UseCls). */
  inContext<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The app's own database module (AppModule's import), not a second one: @nestjs/typeorm registers
 * the data source's name when DatabaseModule.forRoot is called, which AppModule does when it is
 * loaded, and warns that a data source "with the default name is already registered" at every
 * further call. Every module of a suite (its replicas too) reuses this one.
 */
const DATABASE = (Reflect.getMetadata(MODULE_METADATA.IMPORTS, AppModule) as Import[]).find(
  (m): m is DynamicModule => (m as DynamicModule).module === DatabaseModule,
)!;

/**
 * Builds and initializes a testing module of `imports` on the run's test database: the migrations
 * run at init as at the app's start, and the features' background workers start as they do there.
 */
export async function createMediumModule(imports: Import[], env: Record<string, string> = {}): Promise<MediumContext> {
  assertTestDatabase(process.env.TEST_DATABASE_NAME);
  const fullEnv: NodeJS.ProcessEnv = {
    LOG_LEVEL: 'silent',
    RECONCILE_AT: 'off',
    ...NO_PLATFORM_API,
    ...SHARED_MACHINE_BOUNDS,
    DATABASE_URL: process.env.DATABASE_URL,
    ...env,
  };
  let builder = Test.createTestingModule({
    imports: [
      ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [] }),
      DATABASE,
      TransactionModule,
      MetricsModule,
      RabbitmqModule,
      ...imports,
    ],
  });
  for (const [token, value] of configurations(fullEnv)) builder = builder.overrideProvider(token).useValue(value);
  const module = await builder.compile();
  module.useLogger(false);
  await module.init();
  const cls = module.get(ClsService);
  return {
    module,
    get: <T>(type: Type<T>) => module.get(type, { strict: false }),
    inContext: <T>(fn: () => Promise<T>) => cls.run(fn),
    close: () => module.close(),
  };
}
