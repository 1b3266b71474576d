import { MigrationInterface, QueryRunner } from 'typeorm';
import { makeIdentifiersBinary } from '../binary-identifiers';

/**
 * A refused notification that verified and decrypted, for an order this service does not know
 * (OrderNotFound), keeps the order number and transaction id it named: the operator registers that
 * order and re-verifies it, and finds it by either. Null for every other refusal (their contents
 * cannot be trusted).
 */
export class RefusedNotificationOrder1797650000000 implements MigrationInterface {
  name = 'RefusedNotificationOrder1797650000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`refused_notification\`
         ADD \`order_no\` varchar(64) NULL AFTER \`headers\`,
         ADD \`transaction_id\` varchar(64) NULL AFTER \`order_no\`,
         ADD INDEX \`ix_refused_notification_order_no\` (\`order_no\`),
         ADD INDEX \`ix_refused_notification_transaction_id\` (\`transaction_id\`)`,
    );
    // Identifiers are binary NO PAD, as in every table: `aB3` and `Ab3` are two.
    await makeIdentifiersBinary(queryRunner, ['refused_notification']);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`refused_notification\`
         DROP INDEX \`ix_refused_notification_transaction_id\`,
         DROP INDEX \`ix_refused_notification_order_no\`,
         DROP COLUMN \`transaction_id\`,
         DROP COLUMN \`order_no\``,
    );
  }
}
