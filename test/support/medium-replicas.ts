/**
 * Two replicas of the service as the medium tier has them: two testing modules of the same
 * features on one database (each with its own connection pool and background workers), calling
 * one fake platform (the channels' APIs, with real signatures). What two replicas race on is the
 * database; what they send the channel is counted by the fake platform.
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

export interface MediumReplicas {
  platforms: TestPlatforms;
  fake: FakePlatform;
  /** The run's database (or the suite's own), to count effects with. */
  pool: Pool;
  replicas: MediumContext[];
  /** The factories of each replica, in the same order. */
  makes: Factories[];
  /** Builds one more module on the same database and fake platform (another configuration), closed with the rest. */
  another(env: Record<string, string>, imports?: Imports): Promise<{ ctx: MediumContext; make: Factories }>;
  close(): Promise<void>;
}

export interface MediumReplicasOptions {
  /** The features of each module: the order, settlement and admin modules (with the refunds) unless told. */
  imports?: Imports;
  fake?: Partial<FakePlatformOptions>;
  replicas?: number;
  /**
   * A database of the suite's own (useOwnDatabase): for a suite whose workers take every due row,
   * as the refund worker does, so that no other suite's refunds come first.
   */
  ownDatabase?: boolean;
}

export async function startMediumReplicas(
  env: Record<string, string>,
  options: MediumReplicasOptions = {},
): Promise<MediumReplicas> {
  const dropOwnDatabase = options.ownDatabase ? await useOwnDatabase() : undefined;
  const imports = options.imports ?? [OrderModule, SettlementModule, AdminModule];
  const platforms = await createTestPlatforms();
  const fake = await FakePlatform.start({ ...fakePlatformOptions(platforms), ...options.fake });
  const modules: MediumContext[] = [];
  const build = async (moduleEnv: Record<string, string>, moduleImports = imports) => {
    const ctx = await createMediumModule(moduleImports, { ...platforms.env, ...fake.apiEnv, ...moduleEnv });
    modules.push(ctx);
    return { ctx, make: new Factories(ctx, platforms) };
  };
  const replicas: MediumContext[] = [];
  const makes: Factories[] = [];
  for (let i = 0; i < (options.replicas ?? 2); i++) {
    const { ctx, make } = await build(env);
    replicas.push(ctx);
    makes.push(make);
  }
  const pool = testDatabasePool();
  return {
    platforms,
    fake,
    pool,
    replicas,
    makes,
    another: build,
    close: async () => {
      for (const ctx of modules) await ctx.close();
      await fake.close();
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
