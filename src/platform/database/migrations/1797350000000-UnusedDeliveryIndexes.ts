import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops two secondary indexes that no query reads and every first delivery writes: the delivery
 * log's (channel, transaction_id) and the outbox's order_no. Dropping an index is an in-place
 * metadata change in InnoDB: no table copy, no lock on writes.
 */
export class UnusedDeliveryIndexes1797350000000 implements MigrationInterface {
  name = 'UnusedDeliveryIndexes1797350000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` DROP INDEX \`ix_callback_delivery_transaction\``);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` DROP INDEX \`ix_outbox_event_order_no\``);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX \`ix_outbox_event_order_no\` ON \`outbox_event\` (\`order_no\`)`);
    await queryRunner.query(
      `CREATE INDEX \`ix_callback_delivery_transaction\` ON \`callback_delivery\` (\`channel\`, \`transaction_id\`)`,
    );
  }
}
