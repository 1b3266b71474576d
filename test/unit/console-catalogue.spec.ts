import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CODE_LABELS } from '../../console/src/catalogue';
import { AUDIT_ACTIONS, AUDITED_WRITES } from '../../src/operators/audit/audit-actions';
import { VOCABULARY_LISTS } from '../../src/admin/vocabulary.controller';

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });

describe("the console's translation catalogue", () => {
  it('should label every code GET /admin/vocabulary serves, in English and in Chinese', () => {
    const missing: string[] = [];
    for (const [list, codes] of Object.entries(VOCABULARY_LISTS))
      for (const code of codes) {
        const label = Object.hasOwn(CODE_LABELS, code) ? CODE_LABELS[code] : undefined;
        if (!label?.en.trim() || !label.zh.trim()) missing.push(`${list}: ${code}`);
      }
    expect(missing).toEqual([]);
  });

  it('should write Chinese labels in Chinese, never the code itself', () => {
    const untranslated = Object.entries(CODE_LABELS)
      .filter(([code, label]) => label.zh === code || !/[\u4e00-\u9fff]/.test(label.zh))
      .map(([code]) => code);
    expect(untranslated).toEqual([]);
  });

  it("should list every audit action the service's code writes", () => {
    const written = new Set<string>();
    for (const file of sourceFiles(join(__dirname, '../../src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/action: '([A-Z_]+)'/g)) written.add(m[1]);
      for (const m of text.matchAll(/action: [^,\n]*\? '([A-Z_]+)' : '([A-Z_]+)'/g)) {
        written.add(m[1]);
        written.add(m[2]);
      }
      for (const m of text.matchAll(/record\(operator, '([A-Z_]+)'/g)) written.add(m[1]);
      for (const m of text.matchAll(/@AuditedWrite\('([A-Z_]+)'/g)) {
        expect(AUDITED_WRITES).toContain(m[1]);
        written.add(`${m[1]}_REFUSED`);
      }
    }
    expect(written.size).toBeGreaterThan(20);
    expect([...written].filter((action) => !AUDIT_ACTIONS.includes(action))).toEqual([]);
  });
});
