import { MigrationInterface, QueryRunner } from 'typeorm';

export class DeliveryReplays1796600000000 implements MigrationInterface {
  name = 'DeliveryReplays1796600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` ADD \`replay_key\` binary(32) NULL`);
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` ADD \`replays\` int UNSIGNED NOT NULL DEFAULT '0'`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX \`uq_callback_delivery_replay_key\` ON \`callback_delivery\` (\`replay_key\`)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`uq_callback_delivery_replay_key\` ON \`callback_delivery\``);
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` DROP COLUMN \`replays\``);
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` DROP COLUMN \`replay_key\``);
  }
}
