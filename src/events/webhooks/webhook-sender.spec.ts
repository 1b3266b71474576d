import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { urlProblem } from './address-guard';
import { WebhookSender } from './webhook-sender';

describe(WebhookSender.name, () => {
  const received: Array<{ method?: string; body: string }> = [];
  const trusted = getCACertificates('default');
  let server: ReturnType<typeof createServer>;
  let port: number;

  beforeAll(async () => {
    // A certificate for 127.0.0.1 that this process trusts, as a receiver's is by a public CA.
    const dir = mkdtempSync(join(tmpdir(), 'pcs-webhook-tls-'));
    const [key, certificate] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1'].concat([
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        certificate,
      ]),
      { stdio: 'pipe' },
    );
    const cert = readFileSync(certificate, 'utf8');
    setDefaultCACertificates([...trusted, cert]);
    server = createServer({ key: readFileSync(key), cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ method: req.method, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    setDefaultCACertificates(trusted);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it.each(['https', 'HTTPS', 'Https'])(
    'should deliver to %s:// over TLS, as the address guard accepts it',
    async (scheme) => {
      const url = `${scheme}://127.0.0.1:${port}/hooks`;
      expect(urlProblem(url, true)).toBeUndefined();
      const sut = new WebhookSender({ timeoutMs: 5000, maxResponseBytes: 1024, allowPrivate: true });
      const before = received.length;

      const result = await sut.send(url, {}, `{"scheme":"${scheme}"}`);
      sut.close();

      expect(result).toMatchObject({ succeeded: true, statusCode: 204, error: null });
      expect(received.slice(before)).toEqual([{ method: 'POST', body: `{"scheme":"${scheme}"}` }]);
    },
  );
});
