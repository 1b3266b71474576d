import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1795985239725 implements MigrationInterface {
  name = 'InitialSchema1795985239725';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`payment_anomaly\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`type\` varchar(32) NOT NULL, \`order_no\` varchar(64) NOT NULL, \`channel\` varchar(16) NOT NULL, \`transaction_id\` varchar(64) NOT NULL, \`order_amount\` bigint NOT NULL, \`paid_amount\` bigint NOT NULL, \`currency\` char(3) NOT NULL, \`status\` varchar(16) NOT NULL DEFAULT 'OPEN', \`created_at\` datetime(3) NOT NULL, \`updated_at\` datetime(3) NOT NULL, INDEX \`ix_payment_anomaly_order_no\` (\`order_no\`), INDEX \`ix_payment_anomaly_status\` (\`status\`), UNIQUE INDEX \`uq_payment_anomaly_channel_transaction\` (\`channel\`, \`transaction_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`outbox_event\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`event_id\` char(36) NOT NULL, \`type\` varchar(64) NOT NULL, \`order_no\` varchar(64) NOT NULL, \`payload\` json NOT NULL, \`created_at\` datetime(3) NOT NULL, \`published_at\` datetime(3) NULL, UNIQUE INDEX \`uq_outbox_event_event_id\` (\`event_id\`), INDEX \`ix_outbox_event_order_no\` (\`order_no\`), INDEX \`ix_outbox_event_unpublished\` (\`published_at\`, \`id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`callback_delivery\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`channel\` varchar(16) NOT NULL, \`event_type\` varchar(64) NOT NULL, \`transaction_id\` varchar(64) NULL, \`order_no\` varchar(64) NULL, \`outcome\` varchar(32) NOT NULL, \`raw_body\` mediumblob NOT NULL, \`headers\` json NOT NULL, \`received_at\` datetime(3) NOT NULL, INDEX \`ix_callback_delivery_order_no\` (\`order_no\`), INDEX \`ix_callback_delivery_transaction\` (\`channel\`, \`transaction_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`payment_callback\` (\`id\` bigint NOT NULL AUTO_INCREMENT, \`channel\` varchar(16) NOT NULL, \`transaction_id\` varchar(64) NOT NULL, \`order_no\` varchar(64) NOT NULL, \`amount\` bigint NOT NULL, \`currency\` char(3) NOT NULL, \`delivery_count\` int UNSIGNED NOT NULL DEFAULT '1', \`first_received_at\` datetime(3) NOT NULL, \`last_received_at\` datetime(3) NOT NULL, INDEX \`ix_payment_callback_order_no\` (\`order_no\`), UNIQUE INDEX \`uq_payment_callback_channel_transaction\` (\`channel\`, \`transaction_id\`), PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`payment_order\` (\`order_no\` varchar(64) NOT NULL, \`user_id\` varchar(64) NOT NULL, \`amount\` bigint NOT NULL, \`currency\` char(3) NOT NULL, \`status\` varchar(16) NOT NULL, \`channel\` varchar(16) NULL, \`transaction_id\` varchar(64) NULL, \`paid_at\` datetime(3) NULL, \`created_at\` datetime(3) NOT NULL, \`updated_at\` datetime(3) NOT NULL, PRIMARY KEY (\`order_no\`)) ENGINE=InnoDB`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`payment_order\``);
    await queryRunner.query(`DROP INDEX \`uq_payment_callback_channel_transaction\` ON \`payment_callback\``);
    await queryRunner.query(`DROP INDEX \`ix_payment_callback_order_no\` ON \`payment_callback\``);
    await queryRunner.query(`DROP TABLE \`payment_callback\``);
    await queryRunner.query(`DROP INDEX \`ix_callback_delivery_transaction\` ON \`callback_delivery\``);
    await queryRunner.query(`DROP INDEX \`ix_callback_delivery_order_no\` ON \`callback_delivery\``);
    await queryRunner.query(`DROP TABLE \`callback_delivery\``);
    await queryRunner.query(`DROP INDEX \`ix_outbox_event_unpublished\` ON \`outbox_event\``);
    await queryRunner.query(`DROP INDEX \`ix_outbox_event_order_no\` ON \`outbox_event\``);
    await queryRunner.query(`DROP INDEX \`uq_outbox_event_event_id\` ON \`outbox_event\``);
    await queryRunner.query(`DROP TABLE \`outbox_event\``);
    await queryRunner.query(`DROP INDEX \`uq_payment_anomaly_channel_transaction\` ON \`payment_anomaly\``);
    await queryRunner.query(`DROP INDEX \`ix_payment_anomaly_status\` ON \`payment_anomaly\``);
    await queryRunner.query(`DROP INDEX \`ix_payment_anomaly_order_no\` ON \`payment_anomaly\``);
    await queryRunner.query(`DROP TABLE \`payment_anomaly\``);
  }
}
