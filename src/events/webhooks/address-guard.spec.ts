import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { isForbiddenAddress, urlProblem } from './address-guard';
import { WebhookSender } from './webhook-sender';
import { messageBody, newSigningSecret, signedHeaders } from './webhook-signature';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
  ])('should refuse %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    ['::7f00:1', 'IPv4-compatible loopback (::/96)'],
    ['::808:808', 'IPv4-compatible, even of a public address (::/96)'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, in hex (::ffff:0:0/96)'],
    ['::ffff:a00:1', 'IPv4-mapped 10.0.0.1, in hex'],
    ['::ffff:0:7f00:1', 'IPv4-translated (::ffff:0:0:0/96)'],
    ['::ffff:0:808:808', 'IPv4-translated, even of a public address'],
    ['2002:7f00:1::', '6to4 of 127.0.0.1 (2002::/16)'],
    ['2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'],
    ['2002:c0a8:101:1::5', '6to4 of 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo (2001::/32)'],
    ['64:ff9b::7f00:1', 'well-known NAT64 of 127.0.0.1 (64:ff9b::/96)'],
    ['64:ff9b::10.0.0.1', 'well-known NAT64 of 10.0.0.1, dotted'],
    ['64:ff9b::a9fe:a9fe', 'well-known NAT64 of 169.254.169.254'],
    ['64:ff9b:1::808:808', 'local-use NAT64 (64:ff9b:1::/48)'],
    ['64:ff9b:1:ffff::1', 'local-use NAT64, at its end'],
    ['fec0::1', 'site-local (fec0::/10)'],
    ['feff:ffff::1', 'site-local, at its end'],
  ])('should refuse %s: %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    ['93.184.215.14', 'public IPv4'],
    ['8.8.8.8', 'public IPv4'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['::ffff:808:808', 'IPv4-mapped 8.8.8.8'],
    ['2002:808:808::1', '6to4 of 8.8.8.8'],
    ['64:ff9b::808:808', 'well-known NAT64 of 8.8.8.8'],
    ['2001:4860:4860::8888', 'public IPv6 just past Teredo (2001::/32)'],
  ])('should allow %s: %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('urlProblem', () => {
  it('should want https:// unless private URLs are allowed', () => {
    expect(urlProblem('http://shop.example.com/hook', false)).toBe('url must be https://');
    expect(urlProblem('https://shop.example.com/hook', false)).toBeUndefined();
    expect(urlProblem('http://shop.example.com/hook', true)).toBeUndefined();
    expect(urlProblem('ftp://shop.example.com/hook', true)).toBe('url must be http:// or https://');
  });

  it('should refuse private address literals and credentials', () => {
    expect(urlProblem('https://127.0.0.1/hook', false)).toMatch(/loopback, private/);
    expect(urlProblem('https://[::1]:8443/hook', false)).toMatch(/loopback, private/);
    expect(urlProblem('https://169.254.169.254/latest/meta-data', false)).toMatch(/metadata/);
    expect(urlProblem('https://user:pw@shop.example.com/', false)).toBe('url must not carry credentials');
    expect(urlProblem('https://127.0.0.1/hook', true)).toBeUndefined();
  });

  it('should name the setting that allows a loopback address, for development', () => {
    expect(urlProblem('https://127.0.0.1:3001/hook', false)).toMatch(/WEBHOOK_ALLOW_PRIVATE_URLS=true/);
  });

  it('should refuse an address literal that embeds a private IPv4 address, however it is spelled', () => {
    expect(urlProblem('https://[::ffff:127.0.0.1]/hook', false)).toMatch(/loopback, private/);
    expect(urlProblem('https://[2002:7f00:1::]/hook', false)).toMatch(/loopback, private/);
    expect(urlProblem('https://[64:ff9b::169.254.169.254]/hook', false)).toMatch(/loopback, private/);
    expect(urlProblem('https://[2002:808:808::1]/hook', false)).toBeUndefined();
  });
});

describe(WebhookSender.name, () => {
  let server: Server;
  let port: number;
  let requests = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests++;
      if (req.url === '/redirect') return void res.writeHead(302, { location: '/ok' }).end();
      if (req.url === '/big') return void res.writeHead(200).end('y'.repeat(100_000));
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 1000);
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('should refuse a name that resolves to a loopback address, without connecting', async () => {
    const sut = new WebhookSender({ timeoutMs: 1000, maxResponseBytes: 1024, allowPrivate: false });
    const before = requests;
    const result = await sut.send(`http://localhost:${port}/ok`, {}, '{}');
    sut.close();
    expect(result).toMatchObject({ succeeded: false, statusCode: null });
    expect(result.error).toMatch(/forbidden address/);
    expect(requests).toBe(before);
  });

  it('should refuse a loopback literal, without connecting', async () => {
    const sut = new WebhookSender({ timeoutMs: 1000, maxResponseBytes: 1024, allowPrivate: false });
    const result = await sut.send(`http://127.0.0.1:${port}/ok`, {}, '{}');
    sut.close();
    expect(result.error).toBe('127.0.0.1 is a forbidden address');
  });

  it('should not follow a redirect, cut a long answer and time out a slow one', async () => {
    const sut = new WebhookSender({ timeoutMs: 300, maxResponseBytes: 4096, allowPrivate: true });
    const redirect = await sut.send(`http://127.0.0.1:${port}/redirect`, {}, '{}');
    const big = await sut.send(`http://127.0.0.1:${port}/big`, {}, '{}');
    const slow = await sut.send(`http://127.0.0.1:${port}/slow`, {}, '{}');
    sut.close();
    expect(redirect).toMatchObject({ succeeded: false, statusCode: 302, error: 'HTTP 302' });
    expect(big).toMatchObject({ succeeded: true, statusCode: 200 });
    expect(big.responseBody).toHaveLength(1024);
    expect(slow).toMatchObject({ succeeded: false, statusCode: null, error: 'no answer within 300 ms' });
  });
});

describe('signedHeaders', () => {
  it('should be verified by the standardwebhooks library with each of the secrets that signed', () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const body = messageBody({ type: 'payment.succeeded', occurredAt: '2026-12-05T06:00:00.000Z' });
    const headers = signedHeaders([current, previous], 'evt-1', new Date(), body);

    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });
});
