import { readFileSync } from 'node:fs';
import path from 'node:path';
import { queueCatalog } from '@tally/billing-core';
import { workerRoles } from '../../apps/worker/src/config';
import { kubernetesProblems, type Manifest, readManifests } from './kubernetes-validator';

const root = path.resolve(__dirname, '../..');
const manifests = readManifests(root, 'infra/k8s');

type Container = {
  name: string;
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string }>;
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  envFrom?: Array<{ secretRef?: { name: string }; configMapRef?: { name: string } }>;
};
type Probe = { httpGet?: { port: string | number }; tcpSocket?: { port: string | number } };
type Workload = Manifest & {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: { containers: [Container, ...Container[]] } };
  };
};

const ofKind = <T = Manifest>(kind: string) => manifests.filter((m) => m.doc.kind === kind).map((m) => m.doc as T);
const deployments = ofKind<Workload>('Deployment');
const deployment = (name: string) => {
  const found = deployments.find((d) => d.metadata?.name === name);
  if (!found) throw new Error(`no Deployment ${name}`);
  return found;
};
const envOf = (workload: Workload, name: string) =>
  workload.spec.template.spec.containers[0].env?.find((e) => e.name === name)?.value;
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

const validDeployment: Manifest = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'example' },
  spec: {
    selector: { matchLabels: { app: 'example' } },
    template: {
      metadata: { labels: { app: 'example' } },
      spec: { containers: [{ name: 'app', image: 'example:1', readinessProbe: { httpGet: { path: '/', port: 80 } } }] },
    },
  },
};
const withContainer = (patch: Record<string, unknown>): Manifest => {
  const doc = structuredClone(validDeployment) as Workload;
  Object.assign(doc.spec.template.spec.containers[0], patch);
  return doc;
};

const brokenCases: Array<[string, Manifest, string]> = [
  [
    'a wrongly typed field',
    { ...validDeployment, spec: { ...(validDeployment.spec as object), replicas: 'two' } },
    'data/spec/replicas must be integer',
  ],
  [
    'a missing required field',
    { ...validDeployment, spec: { template: (validDeployment as Workload).spec.template } },
    'data/spec must have required property selector',
  ],
  [
    'a misspelt field',
    withContainer({ readinesProbe: { httpGet: { path: '/', port: 80 } } }),
    `'"readinesProbe"' does not exist in type 'IContainer'`,
  ],
  ['a field in the wrong place', withContainer({ replicas: 2 }), `'"replicas"' does not exist in type 'IContainer'`],
  [
    'a ScaledObject without triggers',
    {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'x' },
      spec: { scaleTargetRef: { name: 'x' } },
    },
    'data/spec must have required property triggers',
  ],
  [
    'a KEDA trigger with a number where KEDA wants a string',
    {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'x' },
      spec: { scaleTargetRef: { name: 'x' }, triggers: [{ type: 'redis', metadata: { listLength: 100 } }] },
    },
    'listLength must be string',
  ],
  [
    'a Kustomization with an unknown key',
    { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resource: ['a.yaml'] },
    'must NOT have additional properties',
  ],
  [
    'a kind nothing models',
    { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'x' } },
    'no schema for example.com/v1 Widget',
  ],
];

describe('the Kubernetes validator', () => {
  // One run over every case (each in its own file name), as the manifests are checked: the
  // TypeScript pass costs seconds per run.
  let problems: string[] = [];
  beforeAll(() => {
    problems = kubernetesProblems([
      { file: 'valid.yaml', index: 0, doc: validDeployment },
      ...brokenCases.map(([, doc], i) => ({ file: `case-${i}.yaml`, index: 0, doc })),
    ]);
  });

  it('accepts a valid Deployment', () => {
    expect(problems.filter((p) => p.startsWith('valid.yaml#'))).toEqual([]);
  });

  it.each(brokenCases.map(([what, , expected], i) => [what, i, expected] as const))(
    'rejects %s',
    (_what, i, expected) => {
      expect(problems.filter((p) => p.startsWith(`case-${i}.yaml#`)).join('\n')).toContain(expected);
    },
  );
});

describe('infra/k8s', () => {
  it('every document is valid against the Kubernetes, KEDA or kustomize schema of its kind', () => {
    expect(manifests.length).toBeGreaterThan(15);
    expect(kubernetesProblems(manifests)).toEqual([]);
  });

  it('every file is in a kustomization (except the secret template), and every listed file exists', () => {
    const kustomizations = manifests.filter((m) => m.doc.apiVersion?.startsWith('kustomize.config.k8s.io/'));
    const reached = new Set<string>();
    for (const k of kustomizations) {
      const dir = path.dirname(k.file);
      reached.add(k.file);
      for (const entry of [...((k.doc.resources as string[]) ?? []), ...((k.doc.components as string[]) ?? [])]) {
        const target = path.join(dir, entry);
        const hits = manifests.filter((m) => m.file === target || m.file.startsWith(`${target}/`));
        expect({ entry: `${k.file}: ${entry}`, found: hits.length > 0 }).toEqual({
          entry: `${k.file}: ${entry}`,
          found: true,
        });
        for (const hit of hits) reached.add(hit.file);
      }
    }
    const files = [...new Set(manifests.map((m) => m.file))];
    expect(files.filter((f) => !reached.has(f))).toEqual(['infra/k8s/secret.template.yaml']);
  });

  it('the migration Job runs `migrate` and is applied on its own, before the services', () => {
    const job = manifests.find((m) => m.doc.kind === 'Job');
    expect(job?.file).toBe('infra/k8s/migrate/job.yaml');
    const spec = job?.doc.spec as {
      template: { spec: { containers: [Container, ...Container[]]; restartPolicy: string } };
    };
    expect(spec.template.spec.containers[0].args).toEqual(expect.arrayContaining(['apps/cli/dist/main.js', 'migrate']));
    expect(spec.template.spec.restartPolicy).toBe('Never');
  });

  it('every Deployment has startup, readiness and liveness probes on a port it declares', () => {
    expect(deployments.length).toBe(6);
    for (const d of deployments) {
      const [container] = d.spec.template.spec.containers;
      const portNames = (container.ports ?? []).map((p) => p.name);
      const probes = [container.startupProbe, container.readinessProbe, container.livenessProbe];
      // HTTP for Tally's processes, TCP for PgBouncer (it speaks only the Postgres protocol).
      const probePorts = probes.map((p) => p?.httpGet?.port ?? p?.tcpSocket?.port);
      // A missing probe or one on an undeclared port shows as a name that is not in the list.
      expect({ name: d.metadata?.name, unmatched: probePorts.filter((p) => !portNames.includes(String(p))) }).toEqual({
        name: d.metadata?.name,
        unmatched: [],
      });
    }
  });

  it('every Deployment has a PodDisruptionBudget selecting its pods and no others', () => {
    const budgets = ofKind<Manifest & { spec: { selector: { matchLabels: Record<string, string> } } }>(
      'PodDisruptionBudget',
    );
    for (const d of deployments) {
      const covering = budgets.filter((b) => matches(b.spec.selector.matchLabels, d.spec.template.metadata.labels));
      expect({ deployment: d.metadata?.name, budgets: covering.length }).toEqual({
        deployment: d.metadata?.name,
        budgets: 1,
      });
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    }
    for (const b of budgets) {
      const selected = deployments.filter((d) => matches(b.spec.selector.matchLabels, d.spec.template.metadata.labels));
      expect({ budget: b.metadata?.name, deployments: selected.length }).toEqual({
        budget: b.metadata?.name,
        deployments: 1,
      });
    }
  });

  it('runs each process with the node flags every launcher uses (scripts/node-flags.json)', () => {
    const flags = JSON.parse(readFileSync(path.join(root, 'scripts/node-flags.json'), 'utf8')) as Record<
      string,
      string[]
    >;
    const checked = deployments.flatMap((workload) => {
      const args = workload.spec.template.spec.containers[0].args ?? [];
      const main = args.find((arg) => /^apps\/\w+\/dist\/main\.js$/.test(arg));
      const app = main?.split('/')[1];
      if (!app || !(app in flags)) return [];
      expect({ deployment: workload.metadata?.name, args }).toEqual({
        deployment: workload.metadata?.name,
        args: ['node', ...(flags[app] ?? []), main],
      });
      return [app];
    });
    expect(new Set(checked)).toEqual(new Set(['ingest', 'api', 'worker']));
  });

  it('the services reach Postgres through PgBouncer in transaction mode; the migration Job past it, directly', () => {
    const secrets = manifests
      .filter((m) => m.file === 'infra/k8s/secret.template.yaml')
      .map((m) => m.doc as Manifest & { stringData: Record<string, string> });
    const tallySecrets = secrets.find((secret) => secret.metadata?.name === 'tally-secrets')?.stringData ?? {};
    const pooler = deployment('tally-pgbouncer');
    const service = ofKind<Manifest & { spec: { selector: Record<string, string>; ports: { port: number }[] } }>(
      'Service',
    ).find((candidate) => matches(candidate.spec.selector, pooler.spec.template.metadata.labels));
    const services = new URL(tallySecrets.DATABASE_URL ?? '');
    const migrations = new URL(tallySecrets.DATABASE_MIGRATION_URL ?? '');
    expect({ host: services.hostname, port: Number(services.port) }).toEqual({
      host: service?.metadata?.name,
      port: service?.spec.ports[0]?.port,
    });
    expect(migrations.hostname).not.toBe(service?.metadata?.name);
    expect(migrations.pathname).toBe(services.pathname);
    // The Job reads the secret that holds DATABASE_MIGRATION_URL.
    const job = manifests.find((m) => m.doc.kind === 'Job')?.doc as Workload | undefined;
    expect(job?.spec.template.spec.containers[0].envFrom).toEqual(
      expect.arrayContaining([{ secretRef: { name: 'tally-secrets' } }]),
    );
    const ini = readFileSync(path.join(root, 'infra/k8s/pgbouncer/pgbouncer.ini'), 'utf8');
    const setting = (name: string) => new RegExp(`^${name}\\s*=\\s*(.+)$`, 'm').exec(ini)?.[1]?.trim();
    expect(setting('pool_mode')).toBe('transaction');
    expect(setting('listen_port')).toBe(String(service?.spec.ports[0]?.port));
    // The pooler's pool is the budget docs/scaling.md counts.
    expect(Number(setting('max_db_connections'))).toBeGreaterThan(0);
    expect(pooler.spec.replicas).toBe(2);
    // The pooler's users Secret is a template too, never applied by kustomize.
    expect(secrets.map((secret) => secret.metadata?.name).sort()).toEqual(['tally-pgbouncer-auth', 'tally-secrets']);
  });

  it("every Tally Deployment listens on the pod's interface: HOST=0.0.0.0 from the ConfigMap, not overridden (the default is loopback)", () => {
    const config = manifests.find((m) => m.file === 'infra/k8s/config/kustomization.yaml')?.doc as {
      configMapGenerator: [{ name: string; literals: string[] }];
    };
    expect(config.configMapGenerator[0].literals).toContain('HOST=0.0.0.0');
    const tally = deployments.filter((d) =>
      (d.spec.template.spec.containers[0].args ?? []).some((arg) =>
        /^apps\/(ingest|api|worker)\/dist\/main\.js$/.test(arg),
      ),
    );
    expect(tally.length).toBe(5);
    for (const d of tally) {
      const [container] = d.spec.template.spec.containers;
      expect({
        name: d.metadata?.name,
        configMaps: (container.envFrom ?? []).map((e) => e.configMapRef?.name),
      }).toEqual({
        name: d.metadata?.name,
        configMaps: expect.arrayContaining([config.configMapGenerator[0].name]),
      });
      for (const variable of ['HOST', 'INGEST_HOST', 'API_HOST', 'WORKER_METRICS_HOST']) {
        expect({ name: d.metadata?.name, variable, value: envOf(d, variable) }).toEqual({
          name: d.metadata?.name,
          variable,
          value: undefined,
        });
      }
    }
  });

  it('ingest scales with a HorizontalPodAutoscaler, which owns its replica count', () => {
    const hpas = ofKind<Manifest & { spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number } }>(
      'HorizontalPodAutoscaler',
    );
    expect(hpas.map((h) => h.spec.scaleTargetRef)).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'tally-ingest' },
    ]);
    expect(hpas[0]?.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(deployment('tally-ingest').spec.replicas).toBeUndefined();
  });

  it('KEDA scales each queue consumer on its BullMQ wait list (<QUEUE_PREFIX>:<queue>:wait)', () => {
    const config = manifests.find((m) => m.file === 'infra/k8s/config/kustomization.yaml')?.doc as {
      configMapGenerator: [{ literals: string[] }];
    };
    const prefix = config.configMapGenerator[0].literals.find((l) => l.startsWith('QUEUE_PREFIX='))?.split('=')[1];
    type Trigger = { type: string; metadata: Record<string, string>; authenticationRef?: { name: string } };
    type Scaled = Manifest & {
      spec: {
        scaleTargetRef: { name: string };
        minReplicaCount: number;
        triggers: [Trigger, ...Trigger[]];
      };
    };
    const scaled = ofKind<Scaled>('ScaledObject');
    const lists = Object.fromEntries(
      scaled.map((s) => [s.spec.scaleTargetRef.name, s.spec.triggers[0].metadata.listName]),
    );
    expect(lists).toEqual({
      'tally-worker-inbox': `${prefix}:${queueCatalog.inbox.name}:wait`,
      'tally-worker-studio': `${prefix}:${queueCatalog.studio.name}:wait`,
    });
    const authentications = ofKind('TriggerAuthentication').map((t) => t.metadata?.name);
    for (const s of scaled) {
      const target = deployment(s.spec.scaleTargetRef.name);
      // Each consumer Deployment runs exactly the role of the queue it is scaled on.
      expect(envOf(target, 'WORKER_ROLES')).toBe(s.spec.triggers[0].metadata.listName?.split(':')[1]);
      expect(target.spec.replicas).toBeUndefined();
      expect(s.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
      expect(s.spec.triggers.map((t) => t.type)).toEqual(['redis']);
      expect(authentications).toContain(s.spec.triggers[0].authenticationRef?.name);
    }
  });

  it('separate worker Deployments per role cover every worker role exactly once', () => {
    const workers = deployments.filter((d) =>
      d.spec.template.spec.containers[0].args?.includes('apps/worker/dist/main.js'),
    );
    const rolesByDeployment = Object.fromEntries(
      workers.map((w) => [w.metadata?.name, (envOf(w, 'WORKER_ROLES') ?? 'all').split(',').map((r) => r.trim())]),
    );
    expect(rolesByDeployment).toEqual({
      'tally-worker-inbox': ['inbox'],
      'tally-worker-studio': ['studio'],
      'tally-worker-scheduler': [
        'relay',
        'studio-sweeper',
        'installments',
        'auto-topup',
        'apple-consumption',
        'google-play-consume',
        'google-play-voided',
        'credit-expiry',
        'email',
        'app-webhooks',
        'retention',
        'reconcile',
        'apple-reconcile',
      ],
    });
    expect(Object.values(rolesByDeployment).flat().sort()).toEqual([...workerRoles].sort());
    // Two replicas for availability, reconcile and apple-reconcile included: a pass holds a lease
    // in Postgres and the other replica skips (test/e2e/stripe/reconcile-loop.int.test.ts and
    // test/e2e/stores-apple/apple-reconcile.int.test.ts prove it).
    expect(deployment('tally-worker-scheduler').spec.replicas).toBe(2);
  });
});
