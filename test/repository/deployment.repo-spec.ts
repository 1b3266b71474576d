import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  HorizontalPodAutoscaler,
  IHorizontalPodAutoscaler,
} from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Deployment, IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { IJob, Job } from 'kubernetes-models/batch/v1/Job';
import { IPodDisruptionBudget, PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, IConfigMap, ISecret, IService, Secret, Service } from 'kubernetes-models/v1';
import { IPodMonitor, PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { parse, parseAllDocuments } from 'yaml';
import { loadServerConfig } from '../../src/platform/config/server.config';
import { MetricsServer } from '../../src/platform/metrics/metrics-server';
import { RunningApp, startApp } from '../support/test-app';
import { databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from '../support/test-database';

/**
 * The manifests in docker/k8s and docker/docker-compose.yml, checked against the Kubernetes API
 * schemas (kubernetes-models) and against the app itself: the probes' paths answer, the ports
 * match, every variable of docs/configuration.md reaches the container, and the migration
 * Job's command migrates.
 */

const ROOT = join(__dirname, '../..');
const K8S = join(ROOT, 'docker/k8s');
const run = promisify(execFile);

type Manifest = { apiVersion: string; kind: string; metadata: { name: string } } & Record<string, unknown>;

/** The kinds of docker/k8s, by the `kind` the test asks for. */
interface Kinds {
  Deployment: IDeployment;
  Service: IService;
  ConfigMap: IConfigMap;
  Secret: ISecret;
  PodDisruptionBudget: IPodDisruptionBudget;
  HorizontalPodAutoscaler: IHorizontalPodAutoscaler;
  Job: IJob;
  PodMonitor: IPodMonitor;
}

/** A manifest as the test reads it: each field it names is there (reading one that is not fails the test). */
type Present<T> = T extends readonly (infer E)[]
  ? Present<E>[]
  : T extends object
    ? { [K in keyof T]-?: Present<NonNullable<T[K]>> }
    : T;

function manifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(join(K8S, file), 'utf8')).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS() as Manifest;
  });
}

const MODELS: Record<string, { validate(): void } & (new (data: Manifest) => { validate(): void })> = {
  'apps/v1/Deployment': Deployment as never,
  'v1/Service': Service as never,
  'v1/ConfigMap': ConfigMap as never,
  'v1/Secret': Secret as never,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as never,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler as never,
  'batch/v1/Job': Job as never,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor as never,
};

/** docker/docker-compose.yml, as far as the tests read it. */
interface ComposeFile {
  services: Record<string, { environment: Record<string, string>; command: string[]; volumes: string[] }>;
}

/** The Prometheus configuration the compose file renders, as far as the tests read it. */
interface PrometheusConfig {
  scrape_configs: Array<{
    metrics_path: string;
    dns_sd_configs: Array<{ names: string[]; type: string; port: number }>;
  }>;
  rule_files: string[];
}

/** The variables of the table of docs/configuration.md (the page up to its first section). */
function documentedVariables(): string[] {
  const page = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
  const section = page.slice(0, page.indexOf('\n## '));
  const names = new Set<string>();
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const firstColumn = line.split('|')[1];
    for (const match of firstColumn.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(match[1]);
  }
  return [...names].sort();
}

const all = () =>
  readdirSync(K8S)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap(manifests);
const one = <K extends keyof Kinds>(kind: K, name = 'payment-callback-service') =>
  all().find((m) => m.kind === kind && m.metadata.name === name) as unknown as Present<Kinds[K]>;

describe('docker/k8s', () => {
  it('should hold only manifests valid against the Kubernetes API schemas', () => {
    const kinds = all().map((m) => `${m.apiVersion}/${m.kind}`);
    expect(new Set(kinds)).toEqual(new Set(Object.keys(MODELS)));
    for (const manifest of all()) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(() => new Model(manifest).validate()).not.toThrow();
    }
  });

  it('should fail the schema check on a broken manifest (the check can fail)', () => {
    const broken = one('Deployment');
    Object.assign(broken.spec.template.spec.containers[0].ports[0], { containerPort: 'http' });
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort/);
  });

  describe('the Deployment', () => {
    let app: RunningApp;
    const container = (): IContainer => one('Deployment').spec.template.spec.containers[0];
    const portOf = (probe: IProbe | undefined) => {
      const named = container().ports!.find((p) => p.name === probe!.httpGet!.port);
      return named?.containerPort ?? probe!.httpGet!.port;
    };

    beforeAll(async () => {
      app = await startApp({ METRICS_PORT: '0' });
    });
    afterAll(async () => app?.close());

    it('should probe liveness on /health/live, readiness on /health/ready, and start up on liveness', async () => {
      const { livenessProbe, readinessProbe, startupProbe } = container();
      expect(livenessProbe!.httpGet!.path).toBe('/health/live');
      expect(readinessProbe!.httpGet!.path).toBe('/health/ready');
      expect(startupProbe!.httpGet!.path).toBe('/health/live');
      const management = `http://127.0.0.1:${app.app.get(MetricsServer).port}`;
      for (const probe of [livenessProbe, readinessProbe, startupProbe]) {
        expect((await fetch(management + probe!.httpGet!.path)).status).toBe(200);
      }
    });

    it('should give migrations minutes at start-up before liveness counts', () => {
      const { startupProbe } = container();
      expect(startupProbe!.periodSeconds! * startupProbe!.failureThreshold!).toBeGreaterThanOrEqual(120);
    });

    it("should probe the management port (METRICS_PORT), out of the public port's floods, and serve the API on PORT", () => {
      const configured = Number(one('ConfigMap').data.PORT);
      expect(configured).toBe(loadServerConfig({}).port);
      const management = Number(one('ConfigMap').data.METRICS_PORT);
      expect(management).not.toBe(configured);
      // The app's own default, which the image's HEALTHCHECK falls back on too.
      expect(management).toBe(loadServerConfig({}).metricsPort);
      expect(readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8')).toContain(
        `process.env.METRICS_PORT || ${loadServerConfig({}).metricsPort})`,
      );
      const { livenessProbe, readinessProbe, startupProbe } = container();
      for (const probe of [livenessProbe, readinessProbe, startupProbe]) expect(portOf(probe)).toBe(management);
      expect(readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8')).toContain(`EXPOSE ${configured}`);
      const service = one('Service');
      expect(container().ports!.map((p) => p.name)).toContain(service.spec.ports[0].targetPort);
    });

    it('should leave the drain and the grace period time to finish before the SIGKILL', () => {
      const config = one('ConfigMap').data;
      const shutdownSeconds = (Number(config.SHUTDOWN_DRAIN_MS) + Number(config.SHUTDOWN_GRACE_MS)) / 1000;
      expect(one('Deployment').spec.template.spec.terminationGracePeriodSeconds).toBe(30);
      expect(shutdownSeconds).toBeLessThan(30);
    });

    it('should run as non-root on a read-only root file system, with the heap bounded under the memory limit', () => {
      const pod = one('Deployment').spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(container().securityContext).toMatchObject({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
      });
      const heap = container().env!.find((e) => e.name === 'NODE_OPTIONS')!.value!;
      expect(readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8')).toContain(`NODE_OPTIONS=${heap}`);
      const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(heap)![1]);
      expect(Number(/^(\d+)Mi$/.exec(String(container().resources!.limits!.memory))![1])).toBeGreaterThan(heapMiB + 64);
    });

    it('should select its own pods from the Service, the PodDisruptionBudget and the HPA, and not the Job', () => {
      const labels = one('Deployment').spec.template.metadata.labels;
      const matches = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
      expect(matches(one('Service').spec.selector)).toBe(true);
      expect(matches(one('PodDisruptionBudget').spec.selector.matchLabels)).toBe(true);
      expect(one('HorizontalPodAutoscaler').spec.scaleTargetRef).toMatchObject({
        kind: 'Deployment',
        name: 'payment-callback-service',
      });
      const jobLabels = one('Job', 'payment-callback-migrate').spec.template.metadata.labels;
      expect(Object.entries(one('Service').spec.selector).every(([k, v]) => jobLabels[k] === v)).toBe(false);
    });
  });

  it('should scrape the metrics port of its own pods from the PodMonitor, where METRICS_PORT puts /metrics', () => {
    const pod = one('Deployment').spec.template;
    const monitor = one('PodMonitor');
    const metricsPort = Number(one('ConfigMap').data.METRICS_PORT);
    expect(metricsPort).toBeGreaterThan(0);
    expect(metricsPort).not.toBe(Number(one('ConfigMap').data.PORT));
    expect(Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => pod.metadata.labels[k] === v)).toBe(
      true,
    );
    const [endpoint] = monitor.spec.podMetricsEndpoints;
    expect(endpoint.path).toBe('/metrics');
    const scraped = pod.spec.containers[0].ports.find((p: { name: string }) => p.name === endpoint.port);
    expect(scraped?.containerPort).toBe(metricsPort);
    expect(Number(pod.metadata.annotations['prometheus.io/port'])).toBe(metricsPort);
    expect(one('Service').spec.ports.map((p) => p.targetPort)).not.toContain(endpoint.port);
  });

  it('should hand every documented variable to the container (ConfigMap or Secret) and to docker compose', () => {
    const deployment = one('Deployment');
    const fromConfig = Object.keys(one('ConfigMap').data);
    const fromSecret = Object.keys(one('Secret').stringData);
    const sources = deployment.spec.template.spec.containers[0].envFrom.map(
      (s: { configMapRef?: { name: string }; secretRef?: { name: string } }) =>
        s.configMapRef?.name ?? s.secretRef?.name,
    );
    expect(sources).toEqual(['payment-callback-service', 'payment-callback-service']);
    const compose = parse(readFileSync(join(ROOT, 'docker/docker-compose.yml'), 'utf8')) as ComposeFile;
    const composed = Object.keys(compose.services.app.environment);
    const documented = documentedVariables();
    expect(documented.length).toBeGreaterThan(30);
    expect(documented.filter((v) => !fromConfig.includes(v) && !fromSecret.includes(v))).toEqual([]);
    expect(documented.filter((v) => !composed.includes(v))).toEqual([]);
    // Secrets stay out of the ConfigMap.
    for (const secret of [
      'DATABASE_URL',
      'RABBITMQ_URL',
      'INTERNAL_API_TOKEN',
      'ADMIN_TOKENS',
      'WECHATPAY_APIV3_KEY',
    ]) {
      expect(fromConfig).not.toContain(secret);
    }
  });

  it("should migrate an empty database with the migration Job's command, twice at once", async () => {
    const job = one('Job', 'payment-callback-migrate');
    const [node, script, ...args] = job.spec.template.spec.containers[0].command;
    expect(node).toBe('node');
    // The image runs the compiled file; here its source, with the same code path.
    const source = join(ROOT, script.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
    const name = `${process.env.TEST_DATABASE_NAME}_job`;
    expect(name.startsWith(TEST_DATABASE_PREFIX)).toBe(true);
    await withAdminConnection((conn) => conn.query(`CREATE DATABASE \`${name}\``));
    try {
      const migrate = () =>
        run(process.execPath, ['-r', 'ts-node/register/transpile-only', source, ...args], {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: databaseUrl(name) },
          timeout: 120_000,
        });
      const outputs = await Promise.all([migrate(), migrate()]);
      // One of the two applied everything; the other found nothing left under the lock.
      expect(outputs.map((o) => o.stdout.startsWith('applied migrations:')).sort()).toEqual([false, true]);
      const migrations = readdirSync(join(ROOT, 'src/platform/database/migrations')).filter((f) => f.endsWith('.ts'));
      const applied = await withAdminConnection(async (conn) => {
        const [rows] = await conn.query(`SELECT COUNT(*) AS n FROM \`${name}\`.schema_migrations`);
        return Number((rows as Array<{ n: number }>)[0].n);
      });
      expect(applied).toBe(migrations.length);
    } finally {
      await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
    }
  });
});

describe('docker compose, profile monitoring', () => {
  const compose = () => parse(readFileSync(join(ROOT, 'docker/docker-compose.yml'), 'utf8')) as ComposeFile;

  /** What Compose hands the Prometheus container: its variable interpolated, `$$` unescaped. */
  function prometheusStart(metricsPort: string | undefined) {
    const { app, prometheus } = compose().services;
    const interpolated = String(prometheus.environment.APP_METRICS_PORT).replace(
      /^\$\{METRICS_PORT:-(\w+)\}$/,
      (_, fallback: string) => metricsPort || fallback,
    );
    return { app, prometheus, port: interpolated, script: String(prometheus.command[0]).replace(/\$\$/g, '$') };
  }

  async function renderedConfig(metricsPort: string | undefined) {
    const { prometheus, port, script } = prometheusStart(metricsPort);
    const [render, start] = script.split(' && exec ');
    const mounted = (target: string) =>
      join(ROOT, 'docker', prometheus.volumes.find((v) => v.split(':')[1] === target)!.split(':')[0]);
    const out = join(tmpdir(), `prometheus-${process.pid}-${metricsPort ?? 'unset'}.yml`);
    const configFile = /--config\.file=(\S+)/.exec(start)![1];
    const local = render
      .replace('/etc/prometheus/prometheus.template.yml', mounted('/etc/prometheus/prometheus.template.yml'))
      .replace(configFile, out);
    try {
      await run('/bin/sh', ['-c', local], { env: { ...process.env, APP_METRICS_PORT: port } });
      return { config: parse(readFileSync(out, 'utf8')) as PrometheusConfig, mounted };
    } finally {
      rmSync(out, { force: true });
    }
  }

  it("should scrape the app's management port (the app's METRICS_PORT default) while METRICS_PORT is unset", async () => {
    const { config } = await renderedConfig(undefined);
    const appMetricsPort = Number(/:-(\d+)\}$/.exec(compose().services.app.environment.METRICS_PORT)![1]);
    expect(appMetricsPort).toBe(9464);
    expect(appMetricsPort).toBe(loadServerConfig({}).metricsPort);
    expect(config.scrape_configs[0].dns_sd_configs[0]).toEqual({ names: ['app'], type: 'A', port: appMetricsPort });
  });

  it('should follow METRICS_PORT when it is set', async () => {
    const { config } = await renderedConfig('9464');
    expect(config.scrape_configs[0].dns_sd_configs[0].port).toBe(9464);
    expect(config.scrape_configs[0].metrics_path).toBe('/metrics');
  });

  it('should load the alert rules from where the compose file mounts them', async () => {
    const { config, mounted } = await renderedConfig(undefined);
    expect(config.rule_files).toEqual(['/etc/prometheus/alerts.yml']);
    expect(mounted('/etc/prometheus/alerts.yml')).toBe(join(ROOT, 'docker/prometheus/alerts.yml'));
  });
});
