/** The payment providers Tally takes events from (inbox_events.provider, subscriptions.source, …). */
export const providers = ['stripe', 'revenuecat', 'apple', 'google_play'] as const;
export type Provider = (typeof providers)[number];
