import { galeraSettingProblems } from './cluster-settings';

describe(galeraSettingProblems.name, () => {
  it('should find nothing wrong on a server that is no Galera node', () => {
    expect(galeraSettingProblems({})).toEqual([]);
    expect(galeraSettingProblems({ wsrep_on: 'OFF', binlog_format: 'MIXED', innodb_autoinc_lock_mode: '1' })).toEqual(
      [],
    );
  });

  it('should accept a Galera node with row-based replication and interleaved auto-increment', () => {
    expect(galeraSettingProblems({ wsrep_on: 'ON', binlog_format: 'ROW', innodb_autoinc_lock_mode: '2' })).toEqual([]);
  });

  it('should name each setting of a Galera node that is wrong', () => {
    const problems = galeraSettingProblems({
      wsrep_on: 'ON',
      binlog_format: 'STATEMENT',
      innodb_autoinc_lock_mode: '1',
    });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/binlog_format is STATEMENT.*binlog_format=ROW/);
    expect(problems[1]).toMatch(/innodb_autoinc_lock_mode is 1.*innodb_autoinc_lock_mode=2/);
  });
});
