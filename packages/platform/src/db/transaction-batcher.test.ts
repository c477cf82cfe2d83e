import { BatchItemFailure, createTransactionBatcher } from './transaction-batcher';

/** A run whose batches the test ends one at a time. */
function controlledRun() {
  const batches: { ids: number[]; end: (error?: Error) => void }[] = [];
  const run = (ids: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ ids, end: (error) => (error ? reject(error) : resolve(ids.map((id) => `done ${id}`))) });
    });
  return { run, batches };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createTransactionBatcher', () => {
  it('starts at once while a transaction is free, and puts the jobs that waited in the next one', async () => {
    const { run, batches } = controlledRun();
    const submit = createTransactionBatcher(run, { maxItems: 3, maxTransactions: 1 });
    const results = [1, 2, 3, 4, 5].map((id) => submit(id));
    expect(batches.map((batch) => batch.ids)).toEqual([[1]]);
    batches[0]?.end();
    await settle();
    expect(batches.map((batch) => batch.ids)).toEqual([[1], [2, 3, 4]]);
    batches[1]?.end();
    await settle();
    expect(batches.map((batch) => batch.ids)).toEqual([[1], [2, 3, 4], [5]]);
    batches[2]?.end();
    expect(await Promise.all(results)).toEqual(['done 1', 'done 2', 'done 3', 'done 4', 'done 5']);
  });

  it('keeps up to maxTransactions open, and with maxItems 1 runs every job alone', async () => {
    const { run, batches } = controlledRun();
    const submit = createTransactionBatcher(run, { maxItems: 1, maxTransactions: 2 });
    const results = [1, 2, 3].map((id) => submit(id));
    expect(batches.map((batch) => batch.ids)).toEqual([[1], [2]]);
    batches[1]?.end();
    await settle();
    expect(batches.map((batch) => batch.ids)).toEqual([[1], [2], [3]]);
    batches[0]?.end();
    batches[2]?.end();
    expect(await Promise.all(results)).toEqual(['done 1', 'done 2', 'done 3']);
  });

  it('fails every job of a batch whose run throws, and goes on with the next', async () => {
    const { run, batches } = controlledRun();
    const submit = createTransactionBatcher(run, { maxItems: 4, maxTransactions: 1 });
    const first = submit(1);
    const second = [submit(2), submit(3)];
    batches[0]?.end();
    await settle();
    batches[1]?.end(new Error('database down'));
    await expect(first).resolves.toBe('done 1');
    await expect(Promise.all(second)).rejects.toThrow('database down');
    const later = submit(4);
    batches[2]?.end();
    await expect(later).resolves.toBe('done 4');
  });

  it('rejects only the item a run answers with a BatchItemFailure, and answers the rest of its batch', async () => {
    const run = async (ids: number[]) =>
      ids.map((id) => (id === 2 ? new BatchItemFailure(new Error(`item ${id} failed`)) : `done ${id}`));
    const submit = createTransactionBatcher(run, { maxItems: 4, maxTransactions: 1 });
    const results = await Promise.allSettled([1, 2, 3].map((id) => submit(id)));
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : String(result.reason)))).toEqual([
      'done 1',
      'Error: item 2 failed',
      'done 3',
    ]);
  });

  it('refuses settings that would take no item (every call would wait forever)', () => {
    const run = async (items: number[]) => items;
    expect(() => createTransactionBatcher(run, { maxItems: 0, maxTransactions: 1 })).toThrow(RangeError);
    expect(() =>
      createTransactionBatcher(run, { maxTransactions: 1 } as unknown as { maxItems: number; maxTransactions: number }),
    ).toThrow('maxItems');
    expect(() => createTransactionBatcher(run, { maxItems: 2, maxTransactions: 0 })).toThrow('maxTransactions');
  });
});
