import { ConfigError, parseEnv } from '@tally/platform';
import { optInWorkerRoles, workerEnvSchema, workerRoles } from './config';

describe('worker configuration: WORKER_ROLES', () => {
  const rolesOf = (WORKER_ROLES: string | undefined) =>
    parseEnv(workerEnvSchema, { DATABASE_URL: 'postgres://localhost/tally', WORKER_ROLES }).WORKER_ROLES;
  const everyDefaultRole = ['inbox', 'relay', 'studio', 'studio-sweeper', 'installments', 'email', 'retention'];

  it('runs every role but the opt-in reconcile when unset, empty or all', () => {
    // Spelled out rather than derived from workerRoles, so a new role shows up here on purpose.
    expect(optInWorkerRoles).toEqual(['reconcile']);
    expect([...workerRoles].sort()).toEqual([...everyDefaultRole, 'reconcile'].sort());
    expect(rolesOf(undefined)).toEqual(everyDefaultRole);
    expect(rolesOf('')).toEqual(everyDefaultRole);
    expect(rolesOf('all')).toEqual(everyDefaultRole);
    expect(rolesOf(' all ')).toEqual(everyDefaultRole);
  });

  it('adds reconcile only when it is named, next to all or alone', () => {
    expect(rolesOf('all,reconcile')).toEqual([...everyDefaultRole, 'reconcile']);
    expect(rolesOf('reconcile, all')).toEqual([...everyDefaultRole, 'reconcile']);
    expect(rolesOf('reconcile')).toEqual(['reconcile']);
  });

  it('runs exactly the named roles when all is not among them', () => {
    expect(rolesOf('inbox')).toEqual(['inbox']);
    expect(rolesOf('email,relay,relay')).toEqual(['relay', 'email']);
  });

  it.each([
    ['an unknown name', 'inbox,scheduler', 'scheduler'],
    ['an unknown name next to all', 'all,reconcil', 'reconcil'],
    ['a name in the wrong case', 'Inbox', 'Inbox'],
  ])('refuses %s with a message naming it and every valid role', (_case, value, bad) => {
    let error: unknown;
    try {
      rolesOf(value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'invalid configuration:\n' +
        `  - WORKER_ROLES: unknown role "${bad}"; each role is one of: all, inbox, relay, studio, ` +
        'studio-sweeper, installments, email, retention, reconcile',
    );
  });
});
