import { MigrationInterface, QueryRunner } from 'typeorm';

export class DeliveriesCountedFromLog1795988589807 implements MigrationInterface {
  name = 'DeliveriesCountedFromLog1795988589807';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`payment_callback\` DROP COLUMN \`delivery_count\``);
    await queryRunner.query(`ALTER TABLE \`payment_callback\` DROP COLUMN \`last_received_at\``);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`payment_callback\` ADD \`last_received_at\` datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)`,
    );
    await queryRunner.query(`ALTER TABLE \`payment_callback\` ADD \`delivery_count\` int UNSIGNED NOT NULL DEFAULT 1`);
  }
}
