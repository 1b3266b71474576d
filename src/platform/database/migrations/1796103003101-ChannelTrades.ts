import { MigrationInterface, QueryRunner } from 'typeorm';

export class ChannelTrades1796103003101 implements MigrationInterface {
  name = 'ChannelTrades1796103003101';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`payment_channel_call\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`order_no\` varchar(64) NOT NULL, \`channel\` varchar(16) NOT NULL, \`merchant_id\` varchar(32) NOT NULL, \`request\` varchar(8) NOT NULL, \`outcome\` varchar(16) NOT NULL, \`transaction_id\` varchar(64) NULL, \`detail\` varchar(500) NULL, \`created_at\` datetime(3) NOT NULL, INDEX \`ix_payment_channel_call_order\` (\`order_no\`, \`id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` ADD \`pays\` tinyint NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE \`payment_callback\` ADD \`merchant_id\` varchar(32) NULL`);
    await queryRunner.query(`ALTER TABLE \`payment_order\` ADD \`merchant_id\` varchar(32) NULL`);
    await queryRunner.query(`ALTER TABLE \`payment_order\` ADD \`next_query_at\` datetime(3) NULL`);
    await queryRunner.query(`CREATE INDEX \`ix_payment_order_next_query_at\` ON \`payment_order\` (\`next_query_at\`)`);
    // Deliveries recorded before the flag: the event types that paid.
    await queryRunner.query(
      `UPDATE \`callback_delivery\` SET pays = 1
             WHERE event_type IN ('TRANSACTION.SUCCESS', 'TRADE_SUCCESS', 'TRADE_FINISHED') AND outcome <> 'NOT_PAYING'`,
    );
    // Orders still waiting are asked at the first age of the default schedule; the worker takes it from there.
    await queryRunner.query(
      `UPDATE \`payment_order\` SET next_query_at = created_at + INTERVAL 60 SECOND WHERE status = 'WAIT_PAY'`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_payment_order_next_query_at\` ON \`payment_order\``);
    await queryRunner.query(`ALTER TABLE \`payment_order\` DROP COLUMN \`next_query_at\``);
    await queryRunner.query(`ALTER TABLE \`payment_order\` DROP COLUMN \`merchant_id\``);
    await queryRunner.query(`ALTER TABLE \`payment_callback\` DROP COLUMN \`merchant_id\``);
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` DROP COLUMN \`pays\``);
    await queryRunner.query(`DROP INDEX \`ix_payment_channel_call_order\` ON \`payment_channel_call\``);
    await queryRunner.query(`DROP TABLE \`payment_channel_call\``);
  }
}
