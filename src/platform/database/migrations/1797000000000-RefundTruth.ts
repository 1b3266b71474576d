import { MigrationInterface, QueryRunner } from 'typeorm';
import { binaryNoPadCollation } from '../binary-identifiers';

/**
 * What a refund's lost answers need: when each of its requests was sent (a channel may know a
 * request by it, as UnionPay knows one by orderId + txnTime), and whether the last send settled
 * nothing, so that the channel is asked before anything is sent again. And the refund anomalies: a
 * refund the channel made although it was recorded CLOSED or REJECTED, with the figures. Identifiers
 * binary NO PAD like every other.
 */
export class RefundTruth1797000000000 implements MigrationInterface {
  name = 'RefundTruth1797000000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const id = `CHARACTER SET utf8mb4 COLLATE ${await binaryNoPadCollation(queryRunner)}`;
    await queryRunner.query(
      `ALTER TABLE \`refund\` ADD \`send_times\` varchar(255) NULL AFTER \`last_error\`,
         ADD \`unconfirmed_send\` varchar(16) NULL AFTER \`send_times\``,
    );
    await queryRunner.query(
      `CREATE TABLE \`refund_anomaly\` (
         \`id\` bigint NOT NULL AUTO_INCREMENT,
         \`refund_no\` varchar(64) ${id} NOT NULL,
         \`channel\` varchar(16) NOT NULL,
         \`transaction_id\` varchar(64) ${id} NOT NULL,
         \`order_no\` varchar(64) ${id} NOT NULL,
         \`was_status\` varchar(32) NOT NULL,
         \`amount\` bigint NOT NULL,
         \`paid_amount\` bigint NOT NULL,
         \`refunded_amount\` bigint NOT NULL,
         \`currency\` char(3) NOT NULL,
         \`created_at\` datetime(3) NOT NULL,
         INDEX \`ix_refund_anomaly_order_no\` (\`order_no\`),
         UNIQUE INDEX \`uq_refund_anomaly_refund_no\` (\`refund_no\`),
         PRIMARY KEY (\`id\`)
       ) ENGINE=InnoDB`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`refund_anomaly\``);
    await queryRunner.query(`ALTER TABLE \`refund\` DROP COLUMN \`unconfirmed_send\`, DROP COLUMN \`send_times\``);
  }
}
