import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { composeProblems, loadComposeSchema } from './compose-validator';

const root = path.resolve(__dirname, '../..');

// A file in today's format: top-level `name`, duration strings, long-form depends_on with
// `required`/`restart`, `develop.watch`, `models`, service `provider`, extension fields.
const currentFormat = `
name: demo
x-env: &env
  A: "1"
services:
  db:
    image: postgres:17
    healthcheck:
      test: ["CMD", "pg_isready"]
      interval: 1m30s
      timeout: 500ms
      start_period: 10s
      start_interval: 1s
  app:
    build:
      context: .
      dockerfile: Dockerfile
    environment:
      <<: *env
      B: "2"
    depends_on:
      db:
        condition: service_healthy
        required: true
        restart: true
    deploy:
      replicas: 2
      restart_policy:
        condition: on-failure
        delay: 5s
    stop_grace_period: 1m
    develop:
      watch:
        - action: sync
          path: ./src
          target: /app/src
    models:
      - llm
  tunnel:
    provider:
      type: awesomecloud
      options:
        type: mysql
models:
  llm:
    model: ai/smollm2
volumes:
  data:
`;

describe('the Compose validator follows the current Compose Specification', () => {
  it('uses a schema that knows the current top-level keys', () => {
    const properties = Object.keys((loadComposeSchema() as { properties: object }).properties);
    expect(properties).toEqual(expect.arrayContaining(['name', 'include', 'services', 'models']));
  });

  it('accepts a valid file in the current format (top-level name, duration strings)', () => {
    expect(composeProblems(currentFormat)).toEqual([]);
  });

  it.each([
    [
      'an unknown top-level key',
      currentFormat.replace('volumes:\n  data:', 'volumez:\n  data:'),
      '/: must NOT have additional properties (volumez)',
    ],
    [
      'a misspelt service key',
      currentFormat.replace('    healthcheck:', '    healtcheck:'),
      '/services/db: must NOT have additional properties (healtcheck)',
    ],
    [
      'an unknown depends_on condition',
      currentFormat.replace('service_healthy', 'service_ready'),
      '/services/app/depends_on/db/condition: must be equal to one of the allowed values',
    ],
    [
      'a non-integer replica count',
      currentFormat.replace('replicas: 2', 'replicas: [2]'),
      '/services/app/deploy/replicas: must be integer,string',
    ],
    [
      'a duration Compose cannot parse',
      currentFormat.replace('interval: 1m30s', 'interval: 90 seconds'),
      '/services/db/healthcheck.interval: "90 seconds" is not a duration such as 10s or 1m30s',
    ],
    ['invalid YAML', `${currentFormat}\n  bad: [`, 'YAML:'],
  ])('rejects %s', (_what, text, expected) => {
    const problems = composeProblems(text);
    expect(problems.some((p) => p.startsWith(expected))).toBe(true);
  });
});

describe('docker-compose.yml', () => {
  it('is valid against the current Compose Specification', () => {
    expect(composeProblems(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'))).toEqual([]);
  });

  it('runs each process with the node flags every launcher uses (scripts/node-flags.json)', () => {
    const flags = JSON.parse(readFileSync(path.join(root, 'scripts/node-flags.json'), 'utf8')) as Record<
      string,
      string[]
    >;
    const compose = parseDocument(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), {
      merge: true,
    }).toJS() as {
      services: Record<string, { command?: string[] }>;
    };
    const checked = Object.values(compose.services).flatMap((service) => {
      const command = service.command ?? [];
      const main = command.find((arg) => /^apps\/\w+\/dist\/main\.js$/.test(arg));
      const app = main?.split('/')[1];
      if (!app || !(app in flags)) return [];
      expect(command).toEqual(['node', ...(flags[app] ?? []), main]);
      return [app];
    });
    expect(new Set(checked)).toEqual(new Set(['ingest', 'api', 'worker']));
  });

  it("listens on the container's interface (HOST=0.0.0.0, the default being loopback) and publishes on the host's loopback only", () => {
    const compose = parseDocument(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), {
      merge: true,
    }).toJS() as {
      services: Record<string, { command?: string[]; environment?: Record<string, string>; ports?: string[] }>;
    };
    const apps = Object.entries(compose.services).filter(([, service]) =>
      (service.command ?? []).some((arg) => /^apps\/(ingest|api|worker)\/dist\/main\.js$/.test(arg)),
    );
    expect(apps.map(([name]) => name).sort()).toEqual(['api', 'ingest', 'worker']);
    for (const [name, service] of apps) {
      const environment = service.environment ?? {};
      expect({ name, host: environment.HOST }).toEqual({ name, host: '0.0.0.0' });
      for (const variable of ['INGEST_HOST', 'API_HOST', 'WORKER_METRICS_HOST']) {
        expect({ name, variable, value: environment[variable] }).toEqual({ name, variable, value: undefined });
      }
      for (const mapping of service.ports ?? [])
        expect({ name, mapping }).toEqual({ name, mapping: expect.stringMatching(/^127\.0\.0\.1:/) });
    }
  });
});
