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

  it.each([
    ['a NUL after the name', '/console?token%00=s3cr3t', '/console?token%00=[REDACTED]'],
    ['a semicolon as the separator', '/console?page=1;token=s3cr3t', '/console?page=1;token=[REDACTED]'],
    ['a semicolon instead of the question mark', '/console;token=s3cr3t', '/console;token=[REDACTED]'],
    ['a second question mark', '/console?page=1?token=s3cr3t', '/console?page=1?token=[REDACTED]'],
    ['an escaped letter', '/console?to%6Ben=s3cr3t', '/console?to%6Ben=[REDACTED]'],
    ['an escape escaped again', '/console?to%256Ben=s3cr3t', '/console?to%256Ben=[REDACTED]'],
    [
      'a space or a plus after the name',
      '/console?token%20=a&token+=b',
      '/console?token%20=[REDACTED]&token+=[REDACTED]',
    ],
    ['a tab before the name', '/console?%09token=s3cr3t', '/console?%09token=[REDACTED]'],
    ['upper case', '/console?TOKEN=s3cr3t', '/console?TOKEN=[REDACTED]'],
    ['brackets', '/console?token[]=s3cr3t&api_key[0]=k', '/console?token[]=[REDACTED]&api_key[0]=[REDACTED]'],
    [
      'a dash instead of an underscore',
      '/x?api-key=k&client.secret=c',
      '/x?api-key=[REDACTED]&client.secret=[REDACTED]',
    ],
    ['a malformed escape beside it', '/console?token%zz%00=s3cr3t', '/console?token%zz%00=[REDACTED]'],
    ['an equals sign in the value', '/console?token=a=b&x=1', '/console?token=[REDACTED]&x=1'],
  ])('should never log a credential whose name is spelled with %s', (_what, url, expected) => {
    expect(logged(url)).toBe(expected);
  });

  it('should log other query strings as they came', () => {
    expect(logged('/admin/orders?page=2&status=PAID')).toBe('/admin/orders?page=2&status=PAID');
    expect(logged('/health/live')).toBe('/health/live');
    expect(logged('/notify/alipay?sign_type=RSA2&tokenizer=x&keyword=k;page=2')).toBe(
      '/notify/alipay?sign_type=RSA2&tokenizer=x&keyword=k;page=2',
    );
  });
});
