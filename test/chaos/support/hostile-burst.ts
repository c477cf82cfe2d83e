import { createHmac } from 'node:crypto';
import type { ChaosCluster } from './chaos-cluster';
import { chaosAppKey, chaosRevenueCatAuth, chaosStripeSecret } from './chaos-cluster';
import { canaryEmail, rawBodyCanary, rcPurchase, stripePackPaid } from './events';

/** Values only the hostile burst sends: none may appear in any log line either. */
export const hostileCanaries = {
  wrongStripeSecret: 'whsec_chaos_wrong_secret_canary',
  wrongRevenueCatAuth: 'rc_chaos_wrong_auth_canary',
  wrongAdminKey: 'admin_chaos_wrong_key_canary',
  wrongAppKey: 'app_chaos_wrong_key_canary',
  email: 'chaos.hostile.canary@example.org',
  body: 'chaos-hostile-body-canary-19c2',
};

const hmac = (secret: string, payload: string) => createHmac('sha256', secret).update(payload, 'utf8').digest('hex');

/**
 * Requests that fail on every rejection path, each carrying a secret, a signature, an email or a
 * body fragment that must not reach a log line: bad Stripe signatures (wrong secret, tampered
 * body under a genuine signature, stale, no `v1`), wrong or missing RevenueCat authorization,
 * malformed and truncated bodies under valid authentication, wrong content types, and wrong or
 * missing app and admin keys. Spread over the ingest instances; fewer failures per instance than
 * the failed-authentication limit (30 a minute), so every rejection path is taken, not the 429.
 * Returns the answers by case and the signature hexes sent.
 */
export async function sendHostileBurst(
  cluster: ChaosCluster,
): Promise<{ answers: Record<string, number[]>; signatures: string[] }> {
  const answers: Record<string, number[]> = {};
  const signatures: string[] = [];
  const now = Math.floor(Date.now() / 1000);
  const record = (name: string, status: number) => {
    answers[name] = [...(answers[name] ?? []), status];
  };
  const hostileBody = (id: string) =>
    JSON.parse(stripePackPaid(id, `pi_${id}`, 'hostile-user').body.replaceAll(canaryEmail, hostileCanaries.email));
  const post = async (name: string, url: string, body: string, headers: Record<string, string>) => {
    let status = 0;
    try {
      const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
      await response.text();
      status = response.status;
    } catch {
      status = 0;
    }
    record(name, status);
  };

  for (const [index, ingest] of cluster.ingests.entries()) {
    const stripe = `http://${ingest.host}:${ingest.port}/webhooks/stripe`;
    const revenueCat = `http://${ingest.host}:${ingest.port}/webhooks/revenuecat`;
    const body = JSON.stringify({ ...hostileBody(`evt_hostile_${index}`), note: hostileCanaries.body });
    const json = { 'content-type': 'application/json' };
    const wrong = hmac(hostileCanaries.wrongStripeSecret, `${now}.${body}`);
    const genuine = hmac(chaosStripeSecret, `${now}.${body}`);
    const stale = hmac(chaosStripeSecret, `${now - 3_600}.${body}`);
    signatures.push(wrong, genuine, stale);
    const stripeCases: [string, string, string | undefined][] = [
      ['stripe wrong secret', body, `t=${now},v1=${wrong}`],
      ['stripe tampered body', body.replace('hostile-user', 'hostile-user-2'), `t=${now},v1=${genuine}`],
      ['stripe stale timestamp', body, `t=${now - 3_600},v1=${stale}`],
      ['stripe v0 only', body, `t=${now},v0=${genuine}`],
      ['stripe no signature', body, undefined],
      ['stripe garbage signature', body, `${hostileCanaries.body},v1=${wrong}`],
    ];
    for (const [name, payload, signature] of stripeCases) {
      await post(name, stripe, payload, { ...json, ...(signature ? { 'stripe-signature': signature } : {}) });
    }
    const rcBody = rcPurchase(`rc-hostile-${index}`, 'hostile-user')
      .body.replaceAll(canaryEmail, hostileCanaries.email)
      .replace(rawBodyCanary, hostileCanaries.body);
    await post('revenuecat wrong auth', revenueCat, rcBody, {
      ...json,
      authorization: `Bearer ${hostileCanaries.wrongRevenueCatAuth}`,
    });
    await post('revenuecat raw secret without Bearer', revenueCat, rcBody, {
      ...json,
      authorization: hostileCanaries.wrongRevenueCatAuth,
    });
    await post('revenuecat no auth', revenueCat, rcBody, json);
    // Authenticated, but the body is not what it claims: truncated JSON, not JSON, wrong type.
    const truncated = rcBody.slice(0, Math.floor(rcBody.length / 2));
    const signedTruncated = `t=${now},v1=${hmac(chaosStripeSecret, `${now}.${truncated}`)}`;
    signatures.push(signedTruncated.slice(signedTruncated.indexOf('v1=') + 3));
    await post('revenuecat truncated body', revenueCat, truncated, { ...json, authorization: chaosRevenueCatAuth });
    await post('stripe signed truncated body', stripe, truncated, { ...json, 'stripe-signature': signedTruncated });
    await post('revenuecat not JSON', revenueCat, `${hostileCanaries.body} ${hostileCanaries.email}`, {
      ...json,
      authorization: chaosRevenueCatAuth,
    });
    await post('revenuecat text/plain', revenueCat, rcBody, {
      'content-type': 'text/plain',
      authorization: chaosRevenueCatAuth,
    });
  }

  const api = `http://${cluster.api.host}:${cluster.api.port}`;
  const apiCall = async (name: string, path: string, key: string | undefined, init: RequestInit = {}) => {
    let status = 0;
    try {
      const response = await fetch(`${api}${path}`, {
        ...init,
        headers: {
          ...(key ? { authorization: key } : {}),
          ...(init.body ? { 'content-type': 'application/json' } : {}),
        },
        signal: AbortSignal.timeout(10_000),
      });
      await response.text();
      status = response.status;
    } catch {
      status = 0;
    }
    record(name, status);
  };
  await apiCall('admin wrong key', '/admin/events', `Bearer ${hostileCanaries.wrongAdminKey}`);
  await apiCall('admin app key', '/admin/events', `Bearer ${hostileCanaries.wrongAppKey}`);
  await apiCall('admin no key', '/admin/events', undefined);
  await apiCall('admin raw key without Bearer', '/admin/ledger/verify', hostileCanaries.wrongAdminKey);
  await apiCall('admin wrong key, POST body', '/admin/events/requeue', `Bearer ${hostileCanaries.wrongAdminKey}`, {
    method: 'POST',
    body: JSON.stringify({ note: hostileCanaries.body, email: hostileCanaries.email }),
  });
  await apiCall('app wrong key', '/v1/users/hostile-user/wallet', `Bearer ${hostileCanaries.wrongAppKey}`);
  await apiCall('app malformed body', '/v1/users/hostile-user/studio/requests', `Bearer ${chaosAppKey}`, {
    method: 'POST',
    body: `{"kind":"image_edit","input":{"prompt":"${hostileCanaries.body} ${hostileCanaries.email}"`,
  });
  return { answers, signatures };
}
