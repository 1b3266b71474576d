import { MigrationInterface, QueryRunner } from 'typeorm';
import { makeIdentifiersBinary } from '../binary-identifiers';

/**
 * Signed webhooks: the endpoints, one delivery per (event, endpoint) and its attempts. The events
 * already in the outbox count as fanned out: an endpoint receives what happens after it exists.
 */
export class Webhooks1797100000000 implements MigrationInterface {
  name = 'Webhooks1797100000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`webhook_endpoint\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`url\` varchar(2048) NOT NULL, \`description\` varchar(255) NULL, \`event_types\` json NULL, \`enabled\` tinyint NOT NULL, \`secret\` varchar(64) NOT NULL, \`previous_secret\` varchar(64) NULL, \`previous_secret_until\` datetime(3) NULL, \`failing_since\` datetime(3) NULL, \`disabled_reason\` varchar(200) NULL, \`created_at\` datetime(3) NOT NULL, \`updated_at\` datetime(3) NOT NULL, PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`webhook_delivery\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`endpoint_id\` bigint NOT NULL, \`event_id\` char(36) NOT NULL, \`event_type\` varchar(64) NOT NULL, \`order_no\` varchar(64) NOT NULL, \`body\` text NOT NULL, \`status\` varchar(16) NOT NULL, \`attempts\` int UNSIGNED NOT NULL, \`schedule_start\` int UNSIGNED NOT NULL, \`next_attempt_at\` datetime(3) NOT NULL, \`created_at\` datetime(3) NOT NULL, \`finished_at\` datetime(3) NULL, INDEX \`ix_webhook_delivery_order_no\` (\`order_no\`), INDEX \`ix_webhook_delivery_backlog\` (\`status\`, \`next_attempt_at\`), INDEX \`ix_webhook_delivery_due\` (\`endpoint_id\`, \`status\`, \`next_attempt_at\`), UNIQUE INDEX \`uq_webhook_delivery_endpoint_event\` (\`endpoint_id\`, \`event_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`webhook_attempt\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`delivery_id\` bigint NOT NULL, \`endpoint_id\` bigint NOT NULL, \`event_id\` char(36) NOT NULL, \`attempt\` int UNSIGNED NOT NULL, \`started_at\` datetime(3) NOT NULL, \`latency_ms\` int UNSIGNED NOT NULL, \`status_code\` smallint UNSIGNED NULL, \`succeeded\` tinyint NOT NULL, \`error\` varchar(500) NULL, \`response_body\` varchar(1024) NULL, INDEX \`ix_webhook_attempt_endpoint_started\` (\`endpoint_id\`, \`started_at\`), UNIQUE INDEX \`uq_webhook_attempt_delivery_attempt\` (\`delivery_id\`, \`attempt\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(`ALTER TABLE \`outbox_event\` ADD \`webhooks_fanned_out_at\` datetime(3) NULL`);
    await queryRunner.query(`UPDATE \`outbox_event\` SET \`webhooks_fanned_out_at\` = \`created_at\``);
    await queryRunner.query(
      `CREATE INDEX \`ix_outbox_event_webhooks_pending\` ON \`outbox_event\` (\`webhooks_fanned_out_at\`, \`id\`)`,
    );
    await makeIdentifiersBinary(queryRunner, ['webhook_delivery', 'webhook_attempt']);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_outbox_event_webhooks_pending\` ON \`outbox_event\``);
    await queryRunner.query(`ALTER TABLE \`outbox_event\` DROP COLUMN \`webhooks_fanned_out_at\``);
    await queryRunner.query(`DROP TABLE \`webhook_attempt\``);
    await queryRunner.query(`DROP TABLE \`webhook_delivery\``);
    await queryRunner.query(`DROP TABLE \`webhook_endpoint\``);
  }
}
