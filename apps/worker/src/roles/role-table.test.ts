import { workerMetricFamilies } from '../metrics/worker-metrics';
import { workerMetricFamiliesOf } from '../worker-runtime';
import { workerRoleTable } from './role-table';

describe('the worker role table', () => {
  it('gives every role a start function and only known metric families', () => {
    for (const [role, definition] of Object.entries(workerRoleTable)) {
      expect({ role, start: typeof definition.start }).toEqual({ role, start: 'function' });
      expect(definition.metricFamilies.filter((family) => !workerMetricFamilies.includes(family))).toEqual([]);
    }
  });

  it('registers the families of the roles a process runs, once each', () => {
    expect(workerMetricFamiliesOf(['inbox'])).toEqual(['inbox']);
    expect(workerMetricFamiliesOf(['app-webhooks'])).toEqual(['appWebhooks']);
    expect(workerMetricFamiliesOf(['relay', 'studio', 'relay'])).toEqual(['relay', 'system']);
    expect(workerMetricFamiliesOf(['studio', 'email', 'installments', 'retention', 'studio-sweeper'])).toEqual([]);
    expect(workerMetricFamiliesOf(Object.keys(workerRoleTable) as (keyof typeof workerRoleTable)[]).sort()).toEqual(
      [...workerMetricFamilies].sort(),
    );
  });
});
