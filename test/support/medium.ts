/**
 * The one way a medium suite starts: the service's real modules, with their real repositories, on
 * the run's test database, without HTTP (no Fastify, no routes, no guards).
 *
 *   const medium = await startMedium({ DAILY_LIMIT: '3' }, { imports: [OrderModule], replicas: 2 });
 *
 * gives the platforms' keys, the fake platform (their APIs, with real signatures) unless told not,
 * N replicas of the same features on one database (each its own module, connection pool and
 * background workers; what they race on is the database), a pool on that database to count effects
 * with, and each replica's factories and deliveries. Each module's configuration namespaces are
 * read from a plain map by start-up's own list (src/start/configuration.ts); nothing here reads or
 * changes `process.env` but for the run's DATABASE_URL, which global-setup puts there.
 */
import { DynamicModule, ForwardReference, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { ConfigModule } from '@nestjs/config';
import { Test, TestingModule } from '@nestjs/testing';
import { Pool } from 'mysql2/promise';
import { ClsService } from 'nestjs-cls';
import { AdminModule } from '../../src/admin/admin.module';
import { DomainError } from '../../src/domain/domain-error';
import { AuditLog } from '../../src/operators/audit/audit-log';
import { AppModule } from '../../src/app.module';
import { PlatformReply } from '../../src/channels/payment-channel';
import { RabbitmqModule } from '../../src/events/rabbitmq/rabbitmq.module';
import { OrderModule } from '../../src/order/order.module';
import { DatabaseModule } from '../../src/platform/database/database.module';
import { Readiness } from '../../src/platform/health/readiness';
import { MetricsModule } from '../../src/platform/metrics/metrics.module';
import { TransactionModule } from '../../src/platform/transaction/transaction.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { CONFIGURATION } from '../../src/start/configuration';
import { FakePlatform, FakePlatformOptions } from '../../tools/simulator/fake-platform';
import { Factories } from './factories';
import { FORM, receivePlatformReply, signedDelivery } from './medium-intake';
import { inParallel, StormPayment } from './payment-storm';
import {
  createTestPlatforms,
  fakePlatformOptions,
  NO_PLATFORM_API,
  SignedDeliveries,
  testDatabasePool,
  TestPlatforms,
} from './test-app';
import { assertTestDatabase, useOwnDatabase } from './test-database';

type Import = Type | DynamicModule | Promise<DynamicModule> | ForwardReference;

/** The development machine's MariaDB is shared; a stall there should not fail a test about something else. */
const SHARED_MACHINE_BOUNDS = { DATABASE_QUERY_TIMEOUT_MS: '30000', DATABASE_POOL_ACQUIRE_TIMEOUT_MS: '30000' };

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
 * A module's configuration: a map laid over the platforms' keys and the fake platform's API
 * addresses, or, as a function of those, the whole configuration (as `(p) => notificationsOnly(p.env)`).
 */
export type MediumEnv =
  Record<string, string> | ((platforms: TestPlatforms, apiEnv: Record<string, string>) => Record<string, string>);

/** What a test needs of a module: its providers, and a CLS context to run a job in. */
export interface MediumContext {
  module: TestingModule;
  get<T>(type: Type<T>): T;
  /** Runs `fn` in a CLS context of its own, as a job outside a request does (@UseCls). */
  inContext<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** One replica of the service without HTTP: its module, its factories, and the platforms' deliveries to it. */
export class Replica implements MediumContext {
  readonly make: Factories;
  readonly signed: SignedDeliveries;
  private closed?: Promise<void>;

  constructor(
    readonly module: TestingModule,
    platforms: TestPlatforms,
  ) {
    this.make = new Factories(this, platforms);
    this.signed = new SignedDeliveries(platforms);
  }

  get = <T>(type: Type<T>): T => this.module.get(type, { strict: false });

  inContext = <T>(fn: () => Promise<T>): Promise<T> => this.module.get(ClsService).run(fn);

  /** Closes the module, once: the suite's close skips a replica a test closed already. */
  close(): Promise<void> {
    return (this.closed ??= this.module.close());
  }

  /** POST /notify/<notifyPath> of these exact bytes, as the route hands them to the use case. */
  receive(notifyPath: string, headers: Record<string, string>, body: string): Promise<PlatformReply> {
    return receivePlatformReply(this, notifyPath, headers, body);
  }

  wechatpay(delivery: { headers: Record<string, string>; body: string }): Promise<PlatformReply> {
    return this.receive('wechatpay', delivery.headers, delivery.body);
  }

  alipay(form: string): Promise<PlatformReply> {
    return this.receive('alipay', { 'content-type': FORM }, form);
  }

  /** One delivery of the payment, freshly signed, as the platform sends each retry. */
  deliver(p: StormPayment): Promise<PlatformReply> {
    const { notifyPath, headers, body } = signedDelivery(this.signed, p);
    return this.receive(notifyPath, headers, body);
  }

  async registerAll(payments: StormPayment[], concurrency = 10): Promise<void> {
    await inParallel(payments, concurrency, async (p) => {
      await this.make.order({ orderNo: p.orderNo, amount: p.amount });
    });
  }

  /** /health/ready: whether the replica is ready, and its report's details. */
  async readiness(): Promise<{ ready: boolean; details: Record<string, Record<string, unknown>> }> {
    const { ready, report } = await this.get(Readiness).report();
    return { ready, details: report.details };
  }

  async spool() {
    return (await this.readiness()).details.spool;
  }
}

export interface MediumOptions {
  /** The features of each module: the order, settlement and admin modules (with the refunds) unless told. */
  imports?: Import[];
  /**
   * The fake platform: options laid over the platforms' keys' (fakePlatformOptions), or a function
   * of the platforms that gives all of them (other accounts); `false`: none, and no API addresses.
   */
  fake?: Partial<FakePlatformOptions> | ((platforms: TestPlatforms) => FakePlatformOptions) | false;
  /** The platforms' keys, when the suite made them first to derive something from them (certificates, accounts). */
  platforms?: TestPlatforms;
  /** How many replicas of the same features and configuration start now: 1 unless told (0: the suite starts them). */
  replicas?: number;
  /**
   * A database of the suite's own (useOwnDatabase): for a suite whose workers take every due row,
   * as the refund worker does, so that no other suite's rows come first.
   */
  ownDatabase?: boolean;
}

export interface Medium {
  platforms: TestPlatforms;
  /** The fake platform; undefined with `fake: false`. */
  fake: FakePlatform;
  /** The suite's database, to count effects with. */
  pool: Pool;
  /** The first replica (a module, with its factories), and its factories. */
  ctx: Replica;
  make: Factories;
  replicas: Replica[];
  /** The factories of each replica, in the same order. */
  makes: Factories[];
  /** Starts one more replica on the same database and fake platform (another configuration, other features), closed with the rest. */
  another(env: MediumEnv, imports?: Import[]): Promise<Replica>;
  close(): Promise<void>;
}

/** Builds and initializes one module: the migrations run at init as at the app's start, and the background workers start. */
async function startModule(imports: Import[], env: Record<string, string>): Promise<TestingModule> {
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
  for (const { token, load } of CONFIGURATION) {
    if (token !== undefined) builder = builder.overrideProvider(token).useValue(load(fullEnv));
  }
  const module = await builder.compile();
  module.useLogger(false);
  await module.init();
  return module;
}

export async function startMedium(env: MediumEnv = {}, options: MediumOptions = {}): Promise<Medium> {
  const dropOwnDatabase = options.ownDatabase ? await useOwnDatabase() : undefined;
  const imports = options.imports ?? [OrderModule, SettlementModule, AdminModule];
  const platforms = options.platforms ?? (await createTestPlatforms());
  const fake =
    options.fake === false
      ? undefined
      : await FakePlatform.start(
          typeof options.fake === 'function'
            ? options.fake(platforms)
            : { ...fakePlatformOptions(platforms), ...options.fake },
        );
  const apiEnv = fake?.apiEnv ?? {};
  const started: Replica[] = [];
  const another = async (moduleEnv: MediumEnv, moduleImports = imports) => {
    const full =
      typeof moduleEnv === 'function' ? moduleEnv(platforms, apiEnv) : { ...platforms.env, ...apiEnv, ...moduleEnv };
    const replica = new Replica(await startModule(moduleImports, full), platforms);
    started.push(replica);
    return replica;
  };
  const replicas: Replica[] = [];
  for (let i = 0; i < (options.replicas ?? 1); i++) replicas.push(await another(env));
  const pool = testDatabasePool();
  return {
    platforms,
    fake: fake as FakePlatform,
    pool,
    ctx: replicas[0],
    make: replicas[0]?.make,
    replicas,
    makes: replicas.map((r) => r.make),
    another,
    close: async () => {
      for (const replica of started) await replica.close();
      await fake?.close();
      await pool.end();
      await dropOwnDatabase?.();
    },
  };
}

/** The DomainError a use case fails with: its code, what the HTTP layer answers for it, and its message. */
/**
 * Of concurrent attempts at what may happen once, the one that won: exactly one fulfilled, and
 * every other refused with `refusal` (what the DomainError holds: its code, and its status or
 * message where they are given).
 */
export async function theOneThatWon<T>(
  attempts: Promise<T>[],
  refusal: { code: string; status?: number; message?: string },
): Promise<T> {
  const results = await Promise.allSettled(attempts);
  const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  expect(won).toHaveLength(1);
  for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject(refusal);
  return won[0];
}

export async function domainFailure(
  work: Promise<unknown>,
): Promise<{ code: string; status: number; message: string }> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  const { code, status, message } = error as DomainError;
  return { code, status, message };
}

/**
 * The audit row an admin route writes in the same transaction as the change it asked for (what the
 * controller passes the use case as `alongside`): it is written, and committed, only when the
 * change applied.
 */
export function auditedAs(
  ctx: MediumContext,
  operatorId: string,
  action: string,
  target: string,
  requestBody: unknown = null,
) {
  return async (result: unknown): Promise<void> => {
    await ctx.get(AuditLog).record({ operatorId, action, target, requestBody, result: summary(result) });
  };
}

function summary(result: unknown): unknown {
  const { refund, created } = result as { refund?: unknown; created?: boolean };
  const { refundNo, status, amount } = (refund ?? result) as { refundNo?: string; status?: string; amount?: number };
  return { refundNo, status, amount, created };
}
