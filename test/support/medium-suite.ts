/**
 * A medium suite's set-up, the one the suites share: the platforms' keys, the fake platform (the
 * channels' APIs, with real signatures) unless told not, one or more testing modules of the same
 * features on one database (two are two replicas of the service, each with its own connection pool
 * and background workers), a pool on that database to count effects with, and the factories. What
 * replicas race on is the database; what they send the channel is counted by the fake platform.
 */
import { Pool } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { DomainError } from '../../src/domain/domain-error';
import { AuditLog } from '../../src/operators/audit/audit-log';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { FakePlatform, FakePlatformOptions } from '../../tools/simulator/fake-platform';
import { Factories } from './factories';
import { createMediumModule, MediumContext } from './medium';
import { createTestPlatforms, fakePlatformOptions, testDatabasePool, TestPlatforms } from './test-app';
import { useOwnDatabase } from './test-database';

type Imports = Parameters<typeof createMediumModule>[0];

/**
 * A module's configuration: a map laid over the platforms' keys and the fake platform's API
 * addresses, or, as a function of those, the whole configuration (as `notificationsOnly(...)`).
 */
export type MediumEnv =
  Record<string, string> | ((platforms: TestPlatforms, apiEnv: Record<string, string>) => Record<string, string>);

export interface MediumSuite {
  platforms: TestPlatforms;
  /** The fake platform; undefined with `fake: false`. */
  fake: FakePlatform;
  /** The run's database (or the suite's own), to count effects with. */
  pool: Pool;
  /** The first module, and its factories. */
  ctx: MediumContext;
  make: Factories;
  replicas: MediumContext[];
  /** The factories of each replica, in the same order. */
  makes: Factories[];
  /** Builds one more module on the same database and fake platform (another configuration), closed with the rest. */
  another(env: MediumEnv, imports?: Imports): Promise<{ ctx: MediumContext; make: Factories }>;
  close(): Promise<void>;
}

export interface MediumSuiteOptions {
  /** The features of each module: the order, settlement and admin modules (with the refunds) unless told. */
  imports?: Imports;
  /**
   * The fake platform: options laid over the platforms' keys' (fakePlatformOptions), or a function
   * of the platforms that gives all of them (other accounts); `false`: none, and no API addresses.
   */
  fake?: Partial<FakePlatformOptions> | ((platforms: TestPlatforms) => FakePlatformOptions) | false;
  /** The platforms' keys, when the suite made them first to derive something from them (certificates, accounts). */
  platforms?: TestPlatforms;
  /** How many modules of the same features and configuration: 1 unless told. */
  replicas?: number;
  /**
   * A database of the suite's own (useOwnDatabase): for a suite whose workers take every due row,
   * as the refund worker does, so that no other suite's refunds come first.
   */
  ownDatabase?: boolean;
}

export async function startMediumSuite(env: MediumEnv, options: MediumSuiteOptions = {}): Promise<MediumSuite> {
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
  const modules: MediumContext[] = [];
  const build = async (moduleEnv: MediumEnv, moduleImports = imports) => {
    const full =
      typeof moduleEnv === 'function' ? moduleEnv(platforms, apiEnv) : { ...platforms.env, ...apiEnv, ...moduleEnv };
    const ctx = await createMediumModule(moduleImports, full);
    modules.push(ctx);
    return { ctx, make: new Factories(ctx, platforms) };
  };
  const replicas: MediumContext[] = [];
  const makes: Factories[] = [];
  for (let i = 0; i < (options.replicas ?? 1); i++) {
    const { ctx, make } = await build(env);
    replicas.push(ctx);
    makes.push(make);
  }
  const pool = testDatabasePool();
  return {
    platforms,
    fake: fake as FakePlatform,
    pool,
    ctx: replicas[0],
    make: makes[0],
    replicas,
    makes,
    another: build,
    close: async () => {
      for (const ctx of modules) await ctx.close();
      await fake?.close();
      await pool.end();
      await dropOwnDatabase?.();
    },
  };
}

/** The DomainError a use case fails with: its code, what the HTTP layer answers for it, and its message. */
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
