import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { AnomalyType } from '../src/payments/anomaly/anomaly.entity';

/**
 * The alert rules and the Grafana dashboard name anomaly types in PromQL, where no compiler sees
 * them: checked here against the registry (AnomalyType), so a new type cannot be left out of the
 * page or the panel.
 */
const ROOT = join(__dirname, '..');
const ANOMALY_TYPES = [...Object.values(AnomalyType)].sort();

interface Rule {
  alert?: string;
  expr: string;
}
interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}

/** The values an `outcome=~"A|B|C"` matcher over the notifications' outcomes lets through, sorted. */
function outcomesMatched(expr: string): string[] {
  const matcher = /payment_notifications_total\{[^}]*outcome=~"([^"]+)"/.exec(expr);
  if (!matcher) throw new Error(`no outcome=~ matcher in ${expr}`);
  return matcher[1].split('|').sort();
}

function alertRule(name: string): Rule {
  const file = parse(readFileSync(join(ROOT, 'docker/prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: Rule[] }>;
  };
  const rule = file.groups.flatMap((group) => group.rules).find((r) => r.alert === name);
  if (!rule) throw new Error(`no alert ${name} in docker/prometheus/alerts.yml`);
  return rule;
}

function dashboardExprs(titlePart: string): string[] {
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'docker/grafana/payment-callbacks.json'), 'utf8')) as Panel;
  const panels = (dashboard.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  const found = panels.filter((panel) => panel.title.toLowerCase().includes(titlePart));
  return found.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}

describe('the monitoring against the registries', () => {
  it('should page PaymentAnomalyNew for every anomaly type', () => {
    expect(outcomesMatched(alertRule('PaymentAnomalyNew').expr)).toEqual(ANOMALY_TYPES);
  });

  it("should draw every anomaly type in the dashboard's new-anomalies panel", () => {
    const exprs = dashboardExprs('anomal').filter((expr) => expr.includes('payment_notifications_total'));

    expect(exprs).toHaveLength(1);
    expect(outcomesMatched(exprs[0])).toEqual(ANOMALY_TYPES);
  });
});
