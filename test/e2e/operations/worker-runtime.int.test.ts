import { suiteStack } from '../../support/suite';

/** startWorkerRuntime runs the roles it is given from the role table, and no other. */
describe('worker runtime: roles from the table', () => {
  const stack = suiteStack();

  it('starts the loops of the named roles only, and stop() ends them', async () => {
    const loops = stack.startWorker({ roles: ['retention', 'installments'] });
    expect(Object.keys(loops.loops).sort()).toEqual(['installments', 'retention']);
    const consumer = stack.startWorker({ roles: ['inbox', 'studio'] });
    expect(Object.keys(consumer.loops)).toEqual([]);
    const scheduler = stack.startWorker({ roles: ['relay', 'studio-sweeper'] });
    expect(Object.keys(scheduler.loops).sort()).toEqual(['relay', 'studio-sweeper']);
    await stack.stopWorkers();
  });

  it('refuses the email role without a mailer, leaving nothing running', async () => {
    expect(() => stack.startWorker({ roles: ['retention', 'email'] })).toThrow('the email role needs a mailer');
    expect(stack.workers).toEqual([]);
  });
});
