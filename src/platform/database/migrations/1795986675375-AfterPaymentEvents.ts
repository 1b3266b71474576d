import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The subscribers' bookkeeping and the outbox's retry columns. The example handlers' tables it used to create too
 * now come from their own opt-in set (src/events/after-payment/migrations, EXAMPLE_HANDLERS=true); a database migrated
 * before keeps them, and down() drops them if they are there.
 */
export class AfterPaymentEvents1795986675375 implements MigrationInterface {
  name = 'AfterPaymentEvents1795986675375';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`handler_retry\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`consumer\` varchar(64) NOT NULL, \`event_id\` char(36) NOT NULL, \`payload\` json NOT NULL, \`attempts\` int UNSIGNED NOT NULL, \`next_attempt_at\` datetime(3) NOT NULL, \`last_error\` varchar(500) NOT NULL, \`dead_lettered_at\` datetime(3) NULL, \`created_at\` datetime(3) NOT NULL, INDEX \`ix_handler_retry_due\` (\`dead_lettered_at\`, \`next_attempt_at\`), UNIQUE INDEX \`uq_handler_retry_consumer_event\` (\`consumer\`, \`event_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`processed_event\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`consumer\` varchar(64) NOT NULL, \`event_id\` char(36) NOT NULL, \`processed_at\` datetime(3) NOT NULL, UNIQUE INDEX \`uq_processed_event_consumer_event\` (\`consumer\`, \`event_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(`ALTER TABLE \`outbox_event\` ADD \`attempts\` int UNSIGNED NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` ADD \`next_attempt_at\` datetime(3) NULL`);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` ADD \`last_error\` varchar(500) NULL`);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` ADD \`dead_lettered_at\` datetime(3) NULL`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`outbox_event\` DROP COLUMN \`dead_lettered_at\``);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` DROP COLUMN \`last_error\``);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` DROP COLUMN \`next_attempt_at\``);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` DROP COLUMN \`attempts\``);
    await queryRunner.query(`DROP INDEX \`uq_processed_event_consumer_event\` ON \`processed_event\``);
    await queryRunner.query(`DROP TABLE \`processed_event\``);
    await queryRunner.query(`DROP INDEX \`uq_handler_retry_consumer_event\` ON \`handler_retry\``);
    await queryRunner.query(`DROP INDEX \`ix_handler_retry_due\` ON \`handler_retry\``);
    await queryRunner.query(`DROP TABLE \`handler_retry\``);
    await queryRunner.query(`DROP TABLE IF EXISTS \`shipment_request\``);
    await queryRunner.query(`DROP TABLE IF EXISTS \`points_grant\``);
    await queryRunner.query(`DROP TABLE IF EXISTS \`coupon_issue\``);
  }
}
