import { MigrationInterface, QueryRunner } from 'typeorm';

export class Retention1796400000000 implements MigrationInterface {
  name = 'Retention1796400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` ADD \`raw_pruned_at\` datetime(3) NULL`);
    await queryRunner.query(
      `CREATE INDEX \`ix_callback_delivery_raw_retention\` ON \`callback_delivery\` (\`raw_pruned_at\`, \`received_at\`)`,
    );
    await queryRunner.query(
      `CREATE INDEX \`ix_processed_event_processed_at\` ON \`processed_event\` (\`processed_at\`)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_processed_event_processed_at\` ON \`processed_event\``);
    await queryRunner.query(`DROP INDEX \`ix_callback_delivery_raw_retention\` ON \`callback_delivery\``);
    await queryRunner.query(`ALTER TABLE \`callback_delivery\` DROP COLUMN \`raw_pruned_at\``);
  }
}
