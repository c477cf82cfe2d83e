import { randomUUID } from 'node:crypto';
import { createAppleNotificationVerifier } from '@tally/billing-core';
import {
  appleAppAppleId,
  appleBundleId,
  appleNotificationBody,
  appleNotificationPayload,
  appleVerifierFor,
  postApple,
} from '../../support/apple-notifications';
import { ApplePki, newEcKey, signJws } from '../../support/apple-signing';
import { readJson } from '../../support/stack';
import { suiteStack } from '../../support/suite';

/**
 * `POST /webhooks/apple` (docs/stores-apple.md): App Store Server Notifications V2 verified with
 * Apple's own library against a test CA the tests make (root, intermediate and leaf with Apple's
 * marker OIDs); anything it refuses is answered 400 and stores nothing.
 */
describe('App Store notifications at ingest', () => {
  const pki = ApplePki.create();
  const stack = suiteStack({ appleNotifications: appleVerifierFor(pki) });
  afterAll(() => pki.dispose());

  const stored = (uuid: string) => stack.inboxRows('apple', uuid);
  const refundSpec = (uuid: string) => ({
    type: 'ONE_TIME_CHARGE',
    uuid,
    transaction: { transactionId: `tx-${uuid}`, appAccountToken: randomUUID() },
  });

  it('stores a verified notification under (apple, notificationUUID) with its raw body; a redelivery is a duplicate', async () => {
    const uuid = randomUUID();
    const body = appleNotificationBody(pki, { ...refundSpec(uuid), environment: 'Sandbox' });
    const first = await postApple(stack, body);
    expect(first.status).toBe(200);
    expect(await readJson(first)).toEqual({ status: 'accepted', eventId: uuid });
    const again = await postApple(stack, body);
    expect(await readJson(again)).toEqual({ status: 'duplicate', eventId: uuid });
    const rows = await stored(uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'ONE_TIME_CHARGE', environment: 'sandbox', livemode: false, raw_body: body });
  });

  it('refuses a forged signature, a tampered payload and a tampered nested transaction: 400, nothing stored', async () => {
    const forger = newEcKey();
    const forgedUuid = randomUUID();
    // The right chain in x5c, signed by a key that is not the leaf's.
    const forged = JSON.stringify({
      signedPayload: pki.sign(appleNotificationPayload(pki, refundSpec(forgedUuid)), { key: forger.privateKey }),
    });
    const tamperedUuid = randomUUID();
    const genuine = pki.sign(appleNotificationPayload(pki, refundSpec(tamperedUuid)));
    const [header, , signature] = genuine.split('.');
    const changed = { ...appleNotificationPayload(pki, refundSpec(tamperedUuid)), notificationType: 'REFUND_REVERSED' };
    const tampered = JSON.stringify({
      signedPayload: `${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`,
    });
    // The outer payload genuine, its transaction info re-signed by the forger.
    const nestedUuid = randomUUID();
    const payload = appleNotificationPayload(pki, refundSpec(nestedUuid));
    const nested = {
      ...payload,
      data: {
        ...payload.data,
        signedTransactionInfo: signJws(
          { alg: 'ES256', x5c: pki.x5c },
          { transactionId: 'tx-free', productId: 'com.tally.tokens.100', bundleId: appleBundleId },
          forger.privateKey,
        ),
      },
    };
    const badNested = JSON.stringify({ signedPayload: pki.sign(nested) });
    for (const [uuid, body] of [
      [forgedUuid, forged],
      [tamperedUuid, tampered],
      [nestedUuid, badNested],
    ] as const) {
      const answer = await postApple(stack, body);
      expect({ uuid, status: answer.status }).toEqual({ uuid, status: 400 });
      expect((await readJson(answer)).error.code).toBe('invalid_signature');
      expect(await stored(uuid)).toEqual([]);
    }
  });

  it('keeps a verified chain by its bytes and its certificates\u2019 validity: with it kept, a tampered or forged JWS, another intermediate and a date outside the certificates are still refused', async () => {
    // A verifier of its own, its chain kept by the first notification it accepts.
    const verify = appleVerifierFor(pki);
    const otherIntermediate = ApplePki.create({ name: 'Other Intermediate' });
    try {
      expect((await verify(appleNotificationBody(pki, refundSpec(randomUUID())))).ok).toBe(true);
      const genuine = pki.sign(appleNotificationPayload(pki, refundSpec(randomUUID())));
      const [header, , signature] = genuine.split('.');
      const changed = {
        ...appleNotificationPayload(pki, refundSpec(randomUUID())),
        notificationType: 'REFUND_REVERSED',
      };
      const payload = appleNotificationPayload(pki, refundSpec(randomUUID()));
      const forger = newEcKey();
      const year = 365 * 86_400_000;
      const cases: [string, string][] = [
        ['tampered payload', `${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`],
        ['forged signature', pki.sign(payload, { key: forger.privateKey })],
        [
          'forged nested transaction',
          pki.sign({
            ...payload,
            data: {
              ...payload.data,
              signedTransactionInfo: signJws(
                { alg: 'ES256', x5c: pki.x5c },
                { transactionId: 'tx-free', productId: 'com.tally.tokens.100', bundleId: appleBundleId },
                forger.privateKey,
              ),
            },
          }),
        ],
        // The kept leaf, signed by its own key, presented with an intermediate it was not issued by.
        [
          'the leaf with another intermediate',
          pki.sign(payload, { x5c: [pki.x5c[0], otherIntermediate.x5c[1], pki.x5c[2]] }),
        ],
        // The chain is valid for ten years from the suite's start.
        [
          'signed after the certificates expire',
          pki.sign(appleNotificationPayload(pki, { ...refundSpec(randomUUID()), signedDate: Date.now() + 11 * year })),
        ],
        [
          'signed before they were issued',
          pki.sign(appleNotificationPayload(pki, { ...refundSpec(randomUUID()), signedDate: Date.now() - year / 365 })),
        ],
      ];
      for (const [name, signedPayload] of cases) {
        const verdict = await verify(JSON.stringify({ signedPayload }));
        expect({ name, ok: verdict.ok, code: verdict.ok ? undefined : verdict.code }).toEqual({
          name,
          ok: false,
          code: 'invalid_signature',
        });
      }
      expect((await verify(appleNotificationBody(pki, refundSpec(randomUUID())))).ok).toBe(true);
    } finally {
      otherIntermediate.dispose();
    }
  });

  it('refuses chains that do not end at the pinned root or lack Apple\u2019s marker OIDs: 400, nothing stored', async () => {
    const otherRoot = ApplePki.create({ name: 'Other' });
    const noLeafMarker = ApplePki.create({ name: 'Unmarked Leaf', leafMarker: false });
    const noIntermediateMarker = ApplePki.create({ name: 'Unmarked Intermediate', intermediateMarker: false });
    try {
      const selfSigned = newEcKey();
      const cases: [string, (uuid: string) => string][] = [
        ['wrong root', (uuid) => appleNotificationBody(otherRoot, refundSpec(uuid))],
        [
          'self-signed',
          (uuid) =>
            JSON.stringify({
              signedPayload: signJws(
                { alg: 'ES256', x5c: [pki.x5c[0], pki.x5c[0], pki.x5c[0]] },
                appleNotificationPayload(pki, refundSpec(uuid)),
                selfSigned.privateKey,
              ),
            }),
        ],
        [
          'no x5c',
          (uuid) =>
            JSON.stringify({ signedPayload: pki.sign(appleNotificationPayload(pki, refundSpec(uuid)), { x5c: [] }) }),
        ],
        [
          'our root, a chain of its own',
          (uuid) =>
            // The other CA's leaf and intermediate presented with the pinned root: the intermediate
            // is not signed by it.
            JSON.stringify({
              signedPayload: otherRoot.sign(appleNotificationPayload(otherRoot, refundSpec(uuid)), {
                x5c: [otherRoot.x5c[0], otherRoot.x5c[1], pki.x5c[2]],
              }),
            }),
        ],
      ];
      for (const [name, make] of cases) {
        const uuid = randomUUID();
        const answer = await postApple(stack, make(uuid));
        expect({ name, status: answer.status }).toEqual({ name, status: 400 });
        expect(await stored(uuid)).toEqual([]);
      }
      // A verifier that trusts each unmarked chain's own root still refuses it: the marker OIDs
      // are checked, not only the path to a root (the marked chain passes the same check).
      for (const [name, chain, ok] of [
        ['no leaf marker', noLeafMarker, false],
        ['no intermediate marker', noIntermediateMarker, false],
        ['both markers', pki, true],
      ] as const) {
        const verify = createAppleNotificationVerifier({
          rootCertificates: [chain.rootDer],
          bundleId: appleBundleId,
          appAppleId: appleAppAppleId,
        });
        const verdict = await verify(appleNotificationBody(chain, refundSpec(randomUUID())));
        expect({ name, ok: verdict.ok, code: verdict.ok ? undefined : verdict.code }).toEqual({
          name,
          ok,
          code: ok ? undefined : 'invalid_signature',
        });
      }
    } finally {
      otherRoot.dispose();
      noLeafMarker.dispose();
      noIntermediateMarker.dispose();
    }
  });

  it('refuses another app (bundle id, app Apple id) and environments other than Production and Sandbox', async () => {
    const cases = [
      { name: 'other bundle', spec: { bundleId: 'com.someone.else' } },
      { name: 'other app Apple id', spec: { appAppleId: 42 } },
      { name: 'Xcode', spec: { environment: 'Xcode' as const } },
    ];
    for (const { name, spec } of cases) {
      const uuid = randomUUID();
      const answer = await postApple(stack, appleNotificationBody(pki, { ...refundSpec(uuid), ...spec }));
      expect({ name, status: answer.status, code: (await readJson(answer)).error.code }).toEqual({
        name,
        status: 400,
        code: 'wrong_app',
      });
      expect(await stored(uuid)).toEqual([]);
    }
    // A transaction of another bundle inside a genuine notification of ours.
    const uuid = randomUUID();
    const spec = refundSpec(uuid);
    const answer = await postApple(
      stack,
      appleNotificationBody(pki, { ...spec, transaction: { ...spec.transaction, bundleId: 'com.someone.else' } }),
    );
    expect(answer.status).toBe(400);
    expect(await stored(uuid)).toEqual([]);
  });

  it('answers 400 to a body that is no notification, 415 to one that is not JSON, and counts refusals', async () => {
    for (const body of ['{}', '{"signedPayload": 3}', 'not json', '{"signedPayload": "a.b"}']) {
      const answer = await postApple(stack, body);
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
    }
    const uuid = randomUUID();
    const asText = await postApple(stack, appleNotificationBody(pki, refundSpec(uuid)), 'text/plain');
    expect(asText.status).toBe(415);
    expect(await stored(uuid)).toEqual([]);
    const metrics = await stack.ingestMetrics.registry.getSingleMetricAsString('tally_webhook_requests_total');
    expect(metrics).toMatch(/provider="apple",outcome="bad_signature",service="ingest"} [1-9]/);
    expect(metrics).toMatch(/provider="apple",outcome="accepted",service="ingest"} [1-9]/);
  });
});

describe('App Store notifications while Apple is not configured', () => {
  const pki = ApplePki.create();
  const stack = suiteStack();
  afterAll(() => pki.dispose());

  it('answers 503 not_configured and stores nothing', async () => {
    const uuid = randomUUID();
    const answer = await postApple(stack, appleNotificationBody(pki, { type: 'TEST', uuid }));
    expect(answer.status).toBe(503);
    expect((await readJson(answer)).error.code).toBe('not_configured');
    expect(await stack.inboxRows('apple', uuid)).toEqual([]);
  });
});
