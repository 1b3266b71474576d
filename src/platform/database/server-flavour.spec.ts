import { flavourOfVersion } from './server-flavour';

describe(flavourOfVersion.name, () => {
  it.each([
    ['10.11.6-MariaDB-0+deb12u1', 'mariadb'],
    ['11.4.2-MariaDB-log', 'mariadb'],
    ['5.5.5-10.11.6-MariaDB', 'mariadb'],
    ['8.4.3', 'mysql'],
    ['8.0.36-0ubuntu0.22.04.1', 'mysql'],
    ['8.4.4-standard', 'mysql'],
  ])('should read %s as %s', (version, flavour) => {
    expect(flavourOfVersion(version)).toBe(flavour);
  });
});
