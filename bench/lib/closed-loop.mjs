// Maximum throughput: autocannon with a fixed number of connections, each sending the next
// pre-generated signed event as soon as its previous answer arrived.
import autocannon from 'autocannon';

/**
 * `items` are { body, signature }; request n sends items[n]. If the run outlasts the list it
 * wraps around (those requests are then duplicates) and `wrapped` says so. With `amount`, exactly
 * that many requests are sent instead of running for a duration. Instead of `items`, `next(n)`
 * may make request n's { body, path } when it is sent (a run of unknown length, every request
 * distinct: the spend phase's debits, each under its user's path).
 */
export async function runClosedLoop({ url, connections, durationSeconds, amount, items, next, headers = {} }) {
  let index = 0;
  const result = await autocannon({
    url,
    method: 'POST',
    connections,
    ...(amount ? { amount } : { duration: durationSeconds }),
    headers: { 'content-type': 'application/json', ...headers },
    requests: [
      {
        setupRequest: (request) => {
          const item = next ? next(index) : items[index % items.length];
          index += 1;
          const extra = item.signature ? { 'stripe-signature': item.signature } : {};
          const path = item.path ? { path: item.path } : {};
          return { ...request, ...path, body: item.body, headers: { ...request.headers, ...extra } };
        },
      },
    ],
  });
  const seconds = result.duration;
  return {
    connections,
    durationSeconds: seconds,
    ok: result['2xx'],
    rps: result['2xx'] / seconds,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    // Closed-loop latencies (not corrected for coordinated omission): for reference only.
    p50: result.latency.p50,
    p99: result.latency.p99,
    sent: index,
    wrapped: next ? false : index > items.length,
  };
}
