import { toCamelCased } from './to-camel-cased';

describe('toCamelCased', () => {
  it('renames every column to camelCase and keeps the values and their order', () => {
    const createdAt = new Date('2026-01-02T03:04:05Z');
    const view = toCamelCased({ id: 7, balance_before: 0, inbox_event_id: null, created_at: createdAt });
    expect(view).toEqual({ id: 7, balanceBefore: 0, inboxEventId: null, createdAt });
    expect(Object.keys(view)).toEqual(['id', 'balanceBefore', 'inboxEventId', 'createdAt']);
  });
});
