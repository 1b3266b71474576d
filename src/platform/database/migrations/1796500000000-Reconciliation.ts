import { MigrationInterface, QueryRunner } from 'typeorm';

export class Reconciliation1796500000000 implements MigrationInterface {
  name = 'Reconciliation1796500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`reconciliation_bill_line\` (\`run_id\` bigint NOT NULL, \`line\` int NOT NULL, \`kind\` varchar(8) NOT NULL, \`transaction_id\` varchar(64) NOT NULL, \`order_no\` varchar(64) NOT NULL, \`refund_no\` varchar(64) NULL, \`amount\` bigint NOT NULL, \`occurred_at\` datetime(3) NOT NULL, INDEX \`ix_reconciliation_bill_line_refund\` (\`run_id\`, \`refund_no\`), INDEX \`ix_reconciliation_bill_line_transaction\` (\`run_id\`, \`transaction_id\`), PRIMARY KEY (\`run_id\`, \`line\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`reconciliation_item\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`run_id\` bigint NOT NULL, \`outcome\` varchar(32) NOT NULL, \`kind\` varchar(8) NOT NULL, \`transaction_id\` varchar(64) NULL, \`order_no\` varchar(64) NULL, \`refund_no\` varchar(64) NULL, \`channel_amount\` bigint NULL, \`local_amount\` bigint NULL, \`bill_line\` int NULL, \`resolution\` varchar(32) NULL, \`detail\` varchar(500) NULL, \`created_at\` datetime(3) NOT NULL, INDEX \`ix_reconciliation_item_run\` (\`run_id\`, \`outcome\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`reconciliation_run\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`channel\` varchar(16) NOT NULL, \`merchant_id\` varchar(32) NOT NULL, \`bill_date\` char(10) NOT NULL, \`status\` varchar(16) NOT NULL, \`claim_token\` char(36) NULL, \`lease_until\` datetime(3) NULL, \`attempts\` int NOT NULL DEFAULT '0', \`next_attempt_at\` datetime(3) NULL, \`bill_lines\` int NOT NULL DEFAULT '0', \`counts\` varchar(500) NULL, \`detail\` varchar(500) NULL, \`started_at\` datetime(3) NULL, \`finished_at\` datetime(3) NULL, \`created_at\` datetime(3) NOT NULL, INDEX \`ix_reconciliation_run_date\` (\`bill_date\`), INDEX \`ix_reconciliation_run_due\` (\`status\`, \`next_attempt_at\`), UNIQUE INDEX \`uq_reconciliation_run_day\` (\`channel\`, \`merchant_id\`, \`bill_date\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(`ALTER TABLE \`payment_callback\` ADD \`paid_at\` datetime(3) NULL`);
    // Payments recorded before the channel's time was kept: their first delivery is the closest we have.
    await queryRunner.query(`UPDATE \`payment_callback\` SET paid_at = first_received_at WHERE paid_at IS NULL`);
    await queryRunner.query(
      `CREATE INDEX \`ix_payment_callback_paid_at\` ON \`payment_callback\` (\`channel\`, \`paid_at\`)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_payment_callback_paid_at\` ON \`payment_callback\``);
    await queryRunner.query(`ALTER TABLE \`payment_callback\` DROP COLUMN \`paid_at\``);
    await queryRunner.query(`DROP INDEX \`uq_reconciliation_run_day\` ON \`reconciliation_run\``);
    await queryRunner.query(`DROP INDEX \`ix_reconciliation_run_due\` ON \`reconciliation_run\``);
    await queryRunner.query(`DROP INDEX \`ix_reconciliation_run_date\` ON \`reconciliation_run\``);
    await queryRunner.query(`DROP TABLE \`reconciliation_run\``);
    await queryRunner.query(`DROP INDEX \`ix_reconciliation_item_run\` ON \`reconciliation_item\``);
    await queryRunner.query(`DROP TABLE \`reconciliation_item\``);
    await queryRunner.query(`DROP INDEX \`ix_reconciliation_bill_line_transaction\` ON \`reconciliation_bill_line\``);
    await queryRunner.query(`DROP INDEX \`ix_reconciliation_bill_line_refund\` ON \`reconciliation_bill_line\``);
    await queryRunner.query(`DROP TABLE \`reconciliation_bill_line\``);
  }
}
