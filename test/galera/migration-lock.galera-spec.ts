import { DataSource } from 'typeorm';
import { ClusterMigrationLock, isGaleraNode } from '../../src/platform/database/cluster-migration-lock';
import { GaleraNode, nodeDatabaseUrl } from '../support/galera-cluster';
import { uniqueId } from '../support/test-app';

/** GET_LOCK locks only the node that took it; the migration lock on Galera must hold across nodes. */
describe('the migration lock on a Galera cluster', () => {
  const sources: DataSource[] = [];

  async function on(node: GaleraNode): Promise<DataSource> {
    const source = await new DataSource({ type: 'mariadb', url: nodeDatabaseUrl(node) }).initialize();
    sources.push(source);
    return source;
  }

  afterAll(async () => {
    for (const source of sources) await source.destroy();
  });

  it('is held by one migrator at a time, whichever node each migrator reaches', async () => {
    const [node1, node3] = [(await on(1)).createQueryRunner(), (await on(3)).createQueryRunner()];
    expect(await isGaleraNode(node1)).toBe(true);
    const name = uniqueId('lock-');
    const first = new ClusterMigrationLock(name, 2);
    const second = new ClusterMigrationLock(name, 2);

    // Both at once: one takes it, the other waits and is refused, naming the holder.
    const results = await Promise.allSettled([first.take(node1), second.take(node3)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refusal = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect(String(refusal.reason)).toMatch(/another migrator runs on this Galera cluster held by .* since/);
    expect(String(refusal.reason)).toContain(`DELETE FROM migration_lock WHERE name = '${name}'`);

    // Released, it can be taken through the other node.
    const [holder, waiter, waiterRunner] =
      results[0].status === 'fulfilled' ? [first, second, node3] : [second, first, node1];
    await holder.release(results[0].status === 'fulfilled' ? node1 : node3);
    await waiter.take(waiterRunner);
    await waiter.release(waiterRunner);
    await node1.release();
    await node3.release();
  });
});
