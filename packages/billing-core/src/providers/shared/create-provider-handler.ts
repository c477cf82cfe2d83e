import type { InboxEventRow } from '../../db/schema';
import { InvalidEventError } from '../../errors';
import type { HandlerContext, HandlerResult, InboxHandler, Preparation } from '../../inbox/inbox-handler';
import { ignored } from '../../inbox/inbox-handler';
import { type EventPolicy, paymentEnvironmentOf } from '../../provider-data/payment-environment';
import type { UnitOfWork } from '../../unit-of-work/unit-of-work';

/**
 * How one family of event types is handled. `prepare` runs outside any transaction (provider
 * reads); `apply` runs inside the unit of work whose transaction marks the row finished (its
 * clock is the one `prepare` got in its context).
 */
export interface EventRoute<E, P = undefined> {
  prepare?: (event: E, row: InboxEventRow, ctx: HandlerContext) => Promise<P>;
  apply: (uow: UnitOfWork, event: E, prepared: P, row: InboxEventRow) => Promise<HandlerResult>;
  /**
   * Where the environment policy is applied. `event` (the default): the event's own environment
   * must be known and accepted, so money an event carries never moves without it. `api`: the
   * family re-reads the truth from the provider's API and filters environments there, so an event
   * that names none (some RevenueCat types omit it) may run; one that names a refused environment
   * is still ignored. `none`: the family applies nothing (test events).
   */
  environmentCheck?: EnvironmentCheck | ((event: E) => EnvironmentCheck);
  /**
   * `apply` reads nothing a ledger posting writes and writes nothing ordered against one
   * (Preparation.touchesLedger false): postings handed over before it in the unit may still be
   * pending when it runs. Only for a route that hands its credit over (`postThen`) and reads its
   * own fences; a function when that depends on the event.
   */
  runsAheadOfPostings?: boolean | ((event: E) => boolean);
}

export type EnvironmentCheck = 'event' | 'api' | 'none';

/** Erases a route's prepared type so routes of one provider fit in one table. */
export function defineRoute<E, P>(route: EventRoute<E, P>): EventRoute<E, unknown> {
  return route as unknown as EventRoute<E, unknown>;
}

export interface ProviderHandlerSpec<E> {
  /** Deep validation of the stored body; throws InvalidEventError (the row parks). */
  parse(rawBody: string): E;
  typeOf(event: E): string;
  /** Stripe Connect: the connected account an event belongs to, if any. */
  connectAccountOf?(event: E): string | null;
  /** One entry per event type; several types may share a family's route. */
  routes: Readonly<Record<string, EventRoute<E, unknown>>>;
  /** Types without a route (new ones appear without notice): recorded and ignored. */
  fallback: EventRoute<E, unknown>;
  policy: EventPolicy;
}

type Prepared<E> =
  | { kind: 'decided'; result: HandlerResult }
  | { kind: 'route'; event: E; route: EventRoute<E, unknown>; prepared: unknown };

/**
 * A provider's InboxHandler from a routing table: parse, apply the environment and Connect
 * policy, then hand the event to the route for its type. Adding an event family means adding a
 * file and a table entry, never touching the engine.
 */
export function createProviderHandler<E>(spec: ProviderHandlerSpec<E>): InboxHandler<Prepared<E>> {
  /** Parse and policy: everything before the route's own provider reads. Pure, no I/O. */
  function prepare(row: InboxEventRow, ctx: HandlerContext): Preparation<Prepared<E>> {
    if (row.raw_body === null) {
      throw new InvalidEventError('the raw body was pruned by retention; this event cannot be run again');
    }
    const event = spec.parse(row.raw_body);
    const type = spec.typeOf(event);
    const route = spec.routes[type] ?? spec.fallback;
    const decided = (result: HandlerResult): Preparation<Prepared<E>> => ({
      kind: 'ready',
      prepared: { kind: 'decided', result },
      // A decided event applies nothing.
      touchesLedger: false,
    });
    const account = spec.connectAccountOf?.(event) ?? null;
    if (account !== null && !spec.policy.stripeConnectAccounts.has(account)) {
      return decided(ignored('connect_account', `event of connected account ${account}`));
    }
    const declared = route.environmentCheck ?? 'event';
    const check = route === spec.fallback ? 'none' : typeof declared === 'function' ? declared(event) : declared;
    if (check !== 'none') {
      const environment = paymentEnvironmentOf(row);
      if (environment === null && check === 'event') {
        return decided(ignored('unknown_environment', 'the event names no environment; nothing is applied'));
      }
      if (environment !== null && !spec.policy.paymentEnvironments.has(environment)) {
        return decided(
          ignored(
            'other_environment',
            `${environment} event; this deployment accepts ${[...spec.policy.paymentEnvironments].join(', ')}`,
          ),
        );
      }
    }
    const ahead = route.runsAheadOfPostings ?? false;
    const touchesLedger = !(typeof ahead === 'function' ? ahead(event) : ahead);
    const { prepare: read } = route;
    if (read === undefined)
      return { kind: 'ready', prepared: { kind: 'route', event, route, prepared: undefined }, touchesLedger };
    return {
      kind: 'read',
      read: async () => ({ kind: 'route', event, route, prepared: await read(event, row, ctx) }),
      touchesLedger,
    };
  }

  return {
    prepare,
    async apply(uow, row, prepared) {
      if (prepared.kind === 'decided') return prepared.result;
      return prepared.route.apply(uow, prepared.event, prepared.prepared, row);
    },
  };
}
