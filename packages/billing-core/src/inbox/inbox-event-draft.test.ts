import { createHash } from 'node:crypto';
import { InvalidEventError } from '../errors';
import { parseRevenueCatWebhook } from '../providers/revenuecat/revenuecat-event';
import { parseStripeEvent } from '../providers/stripe/stripe-event';
import { toEventTypeValue, toIndexValue, toProviderEventKey } from './inbox-event-draft';

describe('inbox draft sanitising', () => {
  it('keeps a printable index value (trimmed) and drops every other to null rather than repairing it', () => {
    expect(toIndexValue('  user-1 ')).toBe('user-1');
    expect(toIndexValue('x'.repeat(255))).toBe('x'.repeat(255));
    for (const odd of [
      'x'.repeat(256),
      'user\u0000x',
      'user\u0007x',
      'user\u009fx',
      'lone\ud800half',
      '   ',
      12345,
      null,
      undefined,
      ['user-1'],
      { id: 'user-1' },
    ]) {
      expect({ odd, value: toIndexValue(odd) }).toEqual({ odd, value: null });
    }
    expect(toIndexValue('emoji 😀 ok')).toBe('emoji 😀 ok');
  });

  it('keys an event by its id as sent when it can be stored, else by a stable digest', () => {
    expect(toProviderEventKey(' evt_1 ', 'id')).toBe('evt_1');
    expect(toProviderEventKey(42, 'id')).toBe('42');
    const digest = (id: string) => `sha256:${createHash('sha256').update(JSON.stringify(id)).digest('hex')}`;
    expect(toProviderEventKey('a\u0000b', 'id')).toBe(digest('a\u0000b'));
    expect(toProviderEventKey('a\u0001b', 'id')).toBe(digest('a\u0001b'));
    expect(toProviderEventKey('a\u0000b', 'id')).not.toBe(toProviderEventKey('a\u0001b', 'id'));
    // Two different lone surrogates stay two different keys (the driver would turn both into U+FFFD).
    expect(toProviderEventKey('a\ud800', 'id')).not.toBe(toProviderEventKey('a\ud801', 'id'));
    expect(toProviderEventKey('x'.repeat(256), 'id')).toBe(digest('x'.repeat(256)));
    expect(toProviderEventKey('x'.repeat(256), 'id')).toHaveLength(71);
  });

  it.each([undefined, null, '', '  ', true, { id: 'x' }, ['x']])('refuses an event id of %p', (value) => {
    expect(() => toProviderEventKey(value, 'event.id')).toThrow(InvalidEventError);
  });

  it('stores any string or number type, marking control characters and cutting overlong ones', () => {
    expect(toEventTypeValue('RENEWAL', 'type')).toBe('RENEWAL');
    expect(toEventTypeValue(7, 'type')).toBe('7');
    expect(toEventTypeValue('A\u0000B\nC', 'type')).toBe('A\ufffdB\ufffdC');
    const long = toEventTypeValue('T'.repeat(1_000), 'type');
    expect(long).toBe(`${'T'.repeat(254)}…`);
    // A cut through a surrogate pair leaves no unpaired half behind.
    const cut = toEventTypeValue(`${'T'.repeat(253)}😀😀`, 'type');
    expect(cut).toBe(`${'T'.repeat(253)}\ufffd…`);
    expect(() => toEventTypeValue(undefined, 'type')).toThrow(InvalidEventError);
    expect(() => toEventTypeValue(' ', 'type')).toThrow(InvalidEventError);
  });
});

describe('worker parsing of odd but authenticated bodies', () => {
  it('reads a RevenueCat event with a string timestamp, nulls in lists and a numeric id', () => {
    const event = parseRevenueCatWebhook(
      JSON.stringify({
        event: {
          id: 123,
          type: 'TRANSFER',
          event_timestamp_ms: '1700000000100',
          aliases: ['a', null, 3],
          transferred_from: ['old', null],
          transferred_to: [null, 'new'],
          store: 42,
        },
      }),
    );
    expect(event).toMatchObject({
      id: '123',
      event_timestamp_ms: 1_700_000_000_100,
      aliases: ['a'],
      transferred_from: ['old'],
      transferred_to: ['new'],
      store: undefined,
    });
  });

  it('refuses, naming the field and not its value, what decides money or cannot be referenced', () => {
    const parse = (event: Record<string, unknown>) => () => parseRevenueCatWebhook(JSON.stringify({ event }));
    expect(parse({ id: 'a\u0000b', type: 'TEST' })).toThrow(
      'not a RevenueCat webhook: event.id: contains control characters or unpaired surrogates',
    );
    expect(parse({ id: 'x', type: 'NON_RENEWING_PURCHASE', app_user_id: 5 })).toThrow(/event\.app_user_id/);
    expect(parse({ id: 'x', type: 'NON_RENEWING_PURCHASE', product_id: 5 })).toThrow(/event\.product_id/);
  });

  it('returns the Connect account of a Stripe event and parks one without data.object', () => {
    const event = parseStripeEvent(
      JSON.stringify({ id: 'evt_1', type: 'invoice.paid', account: 'acct_1', data: { object: { id: 'in_1' } } }),
    );
    expect(event.account).toBe('acct_1');
    expect(() => parseStripeEvent(JSON.stringify({ id: 'evt_2', type: 'invoice.paid' }))).toThrow(/data/);
  });
});
