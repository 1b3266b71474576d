import { MigrationInterface, QueryRunner } from 'typeorm';

/** An anomaly closed without a refund: the admin's reason, and the second admin's approval above the threshold. */
export class AnomalyResolution1797300000000 implements MigrationInterface {
  name = 'AnomalyResolution1797300000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`payment_anomaly\` ADD \`resolution_status\` varchar(24) NULL, ADD \`resolution_reason\` varchar(32) NULL, ADD \`resolution_reference\` varchar(64) NULL, ADD \`resolution_note\` varchar(256) NULL, ADD \`resolution_requested_by\` varchar(64) NULL, ADD \`resolution_requested_at\` datetime(3) NULL, ADD \`resolution_reviewed_by\` varchar(64) NULL, ADD \`resolution_reviewed_at\` datetime(3) NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`payment_anomaly\` DROP COLUMN \`resolution_status\`, DROP COLUMN \`resolution_reason\`, DROP COLUMN \`resolution_reference\`, DROP COLUMN \`resolution_note\`, DROP COLUMN \`resolution_requested_by\`, DROP COLUMN \`resolution_requested_at\`, DROP COLUMN \`resolution_reviewed_by\`, DROP COLUMN \`resolution_reviewed_at\``,
    );
  }
}
