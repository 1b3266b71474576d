import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunningApp, startApp } from './support/test-app';

/** The OpenAPI document the app serves, against the committed openapi.json that clients generate from. */

const COMMITTED = join(__dirname, '../openapi.json');

describe('OpenAPI', () => {
  describe('not served by default (OPENAPI unset)', () => {
    let app: RunningApp;

    beforeAll(async () => {
      app = await startApp({});
    });
    afterAll(async () => app?.close());

    it('should serve neither the document nor Swagger UI unless OPENAPI=true', async () => {
      expect((await fetch(`${app.url}/docs-json`)).status).toBe(404);
      expect((await fetch(`${app.url}/docs`)).status).toBe(404);
    });
  });

  describe('served (OPENAPI=true)', () => {
    let app: RunningApp;

    beforeAll(async () => {
      app = await startApp({ OPENAPI: 'true' });
    });
    afterAll(async () => app?.close());

    it('should serve exactly the committed openapi.json (else run `npm run openapi` and commit it)', async () => {
      const response = await fetch(`${app.url}/docs-json`);
      expect(response.status).toBe(200);
      const served = await response.json();
      expect(served).toEqual(JSON.parse(readFileSync(COMMITTED, 'utf8')));
    });

    it('should document the order and admin APIs, and only them', async () => {
      const served = (await (await fetch(`${app.url}/docs-json`)).json()) as {
        paths: Record<string, Record<string, { security?: Array<Record<string, string[]>>; tags?: string[] }>>;
      };
      const operations = Object.entries(served.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
      );
      expect(operations.map((o) => o.route).sort()).toEqual(
        [
          'POST /payment-orders',
          'GET /payment-orders/{orderNo}',
          'POST /payment-orders/{orderNo}/close',
          'POST /payment-orders/{orderNo}/refunds',
          'GET /admin/anomalies',
          'GET /admin/refunds',
          'POST /admin/refunds/{refundNo}/approve',
          'POST /admin/refunds/{refundNo}/reject',
          'POST /admin/refunds/{refundNo}/resolve-offline',
          'GET /admin/orders',
          'GET /admin/orders.csv',
          'GET /admin/orders/{orderNo}',
          'GET /admin/deliveries/{id}',
          'GET /admin/deliveries/{id}/decrypted',
          'GET /admin/stats/callbacks',
          'POST /admin/refunds/emergency',
          'GET /admin/reconciliations',
          'GET /admin/reconciliations/{channel}/{date}',
          'POST /admin/reconciliations/{channel}/{date}/run',
          'GET /admin/me',
          'GET /admin/merchant-changes',
          'GET /admin/merchants',
          'GET /admin/vocabulary',
          'GET /admin/overview',
          'GET /admin/anomalies/{id}',
          'POST /admin/anomalies/{id}/resolve',
          'POST /admin/anomalies/{id}/resolution/approve',
          'POST /admin/anomalies/{id}/resolution/reject',
          'GET /admin/anomalies/{id}/history',
          'GET /admin/transactions/{transactionId}',
          'GET /admin/dead-letters',
          'POST /admin/dead-letters/{eventId}/replay',
          'POST /admin/merchant-changes/{id}/approve',
          'POST /admin/merchant-changes/{id}/reject',
          'POST /admin/merchants/{channel}/{account}/disable',
          'POST /admin/merchants/{channel}/{account}/enable',
          'POST /admin/merchants/{channel}/{account}/key-dry-run',
          'POST /admin/merchants/{channel}/{account}/platform-keys',
          'POST /admin/merchants/{channel}/{account}/sub-merchants',
          'POST /admin/merchants/{channel}/accounts',
          'PUT /admin/merchants/{channel}/{account}',
          'POST /admin/merchant-secrets/rewrap',
          'POST /admin/webhook-endpoints',
          'GET /admin/webhook-endpoints',
          'PATCH /admin/webhook-endpoints/{id}',
          'DELETE /admin/webhook-endpoints/{id}',
          'POST /admin/webhook-endpoints/{id}/rotate-secret',
          'GET /admin/webhook-endpoints/{id}/attempts',
          'POST /admin/webhook-endpoints/{id}/resend',
          'POST /admin/webhook-endpoints/{id}/recover',
          'GET /admin/refused-notifications',
          'GET /admin/refused-notifications/hours',
          'GET /admin/refused-notifications/{id}',
          'POST /admin/refused-notifications/{id}/reverify',
        ].sort(),
      );
      for (const { route, operation } of operations) {
        const scheme = route.includes('/admin/') ? 'admin' : 'internal';
        expect([route, operation.security]).toEqual([route, [{ [scheme]: [] }]]);
      }
    });

    it('should serve Swagger UI at /docs', async () => {
      const response = await fetch(`${app.url}/docs`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(await response.text()).toContain('swagger-ui');
    });
  });

  describe('with OPENAPI=false', () => {
    let app: RunningApp;

    beforeAll(async () => {
      app = await startApp({ OPENAPI: 'false' });
    });
    afterAll(async () => app?.close());

    it('should serve neither the document nor the UI', async () => {
      expect((await fetch(`${app.url}/docs-json`)).status).toBe(404);
      expect((await fetch(`${app.url}/docs`)).status).toBe(404);
    });
  });
});
