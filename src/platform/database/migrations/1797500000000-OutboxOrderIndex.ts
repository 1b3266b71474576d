import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Puts back the outbox's order_no index, which UnusedDeliveryIndexes dropped as unread. The relay
 * reads it: an event is due only when no earlier event of its order is waiting (OutboxRepository.
 * claimDue's NOT EXISTS). Without it that lookup scans every unpublished event before the one it
 * checks, and under a storm this scan cost MariaDB more per payment than the payment's own batch.
 */
export class OutboxOrderIndex1797500000000 implements MigrationInterface {
  name = 'OutboxOrderIndex1797500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX \`ix_outbox_event_order_no\` ON \`outbox_event\` (\`order_no\`)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_outbox_event_order_no\` ON \`outbox_event\``);
  }
}
