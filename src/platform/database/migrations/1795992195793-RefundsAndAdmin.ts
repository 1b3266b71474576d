import { MigrationInterface, QueryRunner } from 'typeorm';

export class RefundsAndAdmin1795992195793 implements MigrationInterface {
  name = 'RefundsAndAdmin1795992195793';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`order_status_change\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`order_no\` varchar(64) NOT NULL, \`from_status\` varchar(32) NULL, \`to_status\` varchar(32) NOT NULL, \`event\` varchar(32) NOT NULL, \`cause\` varchar(128) NULL, \`changed_at\` datetime(3) NOT NULL, INDEX \`ix_order_status_change_order\` (\`order_no\`, \`id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`refund\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`refund_no\` varchar(64) NOT NULL, \`channel\` varchar(16) NOT NULL, \`transaction_id\` varchar(64) NOT NULL, \`order_no\` varchar(64) NOT NULL, \`purpose\` varchar(32) NOT NULL, \`amount\` bigint NOT NULL, \`transaction_amount\` bigint NOT NULL, \`currency\` char(3) NOT NULL, \`reason\` varchar(256) NOT NULL, \`status\` varchar(16) NOT NULL, \`channel_refund_id\` varchar(64) NULL, \`attempts\` int UNSIGNED NOT NULL DEFAULT '0', \`next_attempt_at\` datetime(3) NULL, \`last_error\` varchar(500) NULL, \`requested_by\` varchar(64) NOT NULL, \`created_at\` datetime(3) NOT NULL, \`updated_at\` datetime(3) NOT NULL, \`completed_at\` datetime(3) NULL, INDEX \`ix_refund_order_no\` (\`order_no\`), INDEX \`ix_refund_due\` (\`status\`, \`next_attempt_at\`), INDEX \`ix_refund_transaction\` (\`channel\`, \`transaction_id\`), UNIQUE INDEX \`uq_refund_refund_no\` (\`refund_no\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`admin_audit\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`operator_id\` varchar(64) NOT NULL, \`action\` varchar(64) NOT NULL, \`target\` varchar(128) NOT NULL, \`request_body\` json NOT NULL, \`result\` json NOT NULL, \`created_at\` datetime(3) NOT NULL, INDEX \`ix_admin_audit_target\` (\`target\`, \`id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` ADD \`processing_ms\` int UNSIGNED NULL`);
    await queryRunner.query(
      `ALTER TABLE \`payment_callback\` ADD \`refund_reserved_amount\` bigint NOT NULL DEFAULT '0'`,
    );
    await queryRunner.query(`ALTER TABLE \`payment_order\` MODIFY \`status\` varchar(32) NOT NULL`);
    // The history of orders that existed before it was kept, from what their rows still say.
    await queryRunner.query(
      `INSERT INTO \`order_status_change\` (order_no, from_status, to_status, event, cause, changed_at)
       SELECT order_no, NULL, 'WAIT_PAY', 'REGISTER', NULL, created_at FROM \`payment_order\`
       UNION ALL
       SELECT order_no, 'WAIT_PAY', status, IF(status = 'PAID', 'PAY', 'CLOSE'), transaction_id, updated_at
       FROM \`payment_order\` WHERE status IN ('PAID', 'CLOSED')`,
    );
    await queryRunner.query(
      `CREATE INDEX \`ix_callback_delivery_received_at\` ON \`callback_delivery\` (\`received_at\`)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_callback_delivery_received_at\` ON \`callback_delivery\``);
    await queryRunner.query(`ALTER TABLE \`payment_order\` MODIFY \`status\` varchar(16) NOT NULL`);
    await queryRunner.query(`ALTER TABLE \`payment_callback\` DROP COLUMN \`refund_reserved_amount\``);
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` DROP COLUMN \`processing_ms\``);
    await queryRunner.query(`DROP INDEX \`ix_admin_audit_target\` ON \`admin_audit\``);
    await queryRunner.query(`DROP TABLE \`admin_audit\``);
    await queryRunner.query(`DROP INDEX \`uq_refund_refund_no\` ON \`refund\``);
    await queryRunner.query(`DROP INDEX \`ix_refund_transaction\` ON \`refund\``);
    await queryRunner.query(`DROP INDEX \`ix_refund_due\` ON \`refund\``);
    await queryRunner.query(`DROP INDEX \`ix_refund_order_no\` ON \`refund\``);
    await queryRunner.query(`DROP TABLE \`refund\``);
    await queryRunner.query(`DROP INDEX \`ix_order_status_change_order\` ON \`order_status_change\``);
    await queryRunner.query(`DROP TABLE \`order_status_change\``);
  }
}
