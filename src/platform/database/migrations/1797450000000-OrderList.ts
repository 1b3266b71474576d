import { MigrationInterface, QueryRunner } from 'typeorm';

/** The console's order list, newest first: a keyset page on (created_at, order_no). */
export class OrderList1797450000000 implements MigrationInterface {
  name = 'OrderList1797450000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX \`ix_payment_order_created_at\` ON \`payment_order\` (\`created_at\`)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`ix_payment_order_created_at\` ON \`payment_order\``);
  }
}
