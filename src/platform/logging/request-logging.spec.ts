import { IncomingMessage } from 'node:http';
import { RequestLogging } from './logging.module';

describe(RequestLogging.name, () => {
  const sut = new RequestLogging();
  const logged = (url: string) => {
    const [options] = sut.pinoParams();
    const serialize = (options.serializers as Record<string, (req: Partial<IncomingMessage>) => { url?: string }>).req;
    return serialize({ method: 'GET', url }).url;
  };

  it.each([
    ['/console?token=s3cr3t-token', '/console?token=[REDACTED]'],
    ['/admin/orders?page=2&access_token=s3cr3t&x=1', '/admin/orders?page=2&access_token=[REDACTED]&x=1'],
    ['/notify/alipay?sign=c2lnbg%3D%3D&sign_type=RSA2', '/notify/alipay?sign=[REDACTED]&sign_type=RSA2'],
    [
      '/x?Authorization=Bearer%20abc&password=p&api_key=k',
      '/x?Authorization=[REDACTED]&password=[REDACTED]&api_key=[REDACTED]',
    ],
  ])('should never log a credential from the query string (%s)', (url, expected) => {
    expect(logged(url)).toBe(expected);
  });

  it('should log other query strings as they came', () => {
    expect(logged('/admin/orders?page=2&status=PAID')).toBe('/admin/orders?page=2&status=PAID');
    expect(logged('/health/live')).toBe('/health/live');
  });
});
