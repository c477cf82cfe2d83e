// A counting TCP proxy between a client and Postgres (profiling only, not for figures): a process
// of its own, so its work does not land on the load generator's event loop. It reads the wire
// protocol's framing in both directions and counts what pg_stat_statements cannot tell apart:
// - round trips: each simple query ('Q') or extended-protocol batch ending in a Sync ('S') is one
//   wait for the server's ReadyForQuery ('Z'); a multi-statement query (`begin; set local …`) is
//   one round trip and two statements;
// - transactions (ReadyForQuery going from idle to in-transaction and back) and their duration,
//   split into the time spent waiting on Postgres (a round trip sent until its ReadyForQuery,
//   the sockets included) and the time the client took between round trips while the
//   transaction stayed open: what holds a hot wallet's row lock besides Postgres's own work;
// - the same two times by the round trip's position in its transaction (0: the one that began
//   it), so a wait for a lock shows at the statement that takes it and the hold after it.
// Plain connections only (no SSL request), as the bench's private cluster serves them.
//
// Env: LISTEN_PORT, UPSTREAM_HOST, UPSTREAM_PORT, STATS_PORT (GET /stats answers the totals).
import http from 'node:http';
import net from 'node:net';

const totals = {
  connections: 0,
  roundTrips: 0,
  roundTripsInTransaction: 0,
  transactions: 0,
  transactionMs: 0,
  postgresMsInTransaction: 0,
  clientMsInTransaction: 0,
  // By position in the transaction: round trips, Postgres ms, and the client's ms before each.
  positions: [],
};

function atPosition(position) {
  totals.positions[position] ??= { roundTrips: 0, postgresMs: 0, clientMsBefore: 0 };
  return totals.positions[position];
}

/**
 * Calls `onMessage(type, firstByte)` for each message of a stream, `typed` after the start-up
 * (client side: the first messages have no type byte; server side: typed from the start).
 * `firstByte`: the body's first byte, read only for ReadyForQuery (its transaction status).
 */
function framing(typedFromStart, onMessage) {
  let typed = typedFromStart;
  let header = Buffer.alloc(0);
  let skip = 0;
  let wantStatus = false;
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (wantStatus) {
        onMessage('Z', chunk[at]);
        wantStatus = false;
        at += 1;
        skip -= 1;
        continue;
      }
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - at);
        skip -= n;
        at += n;
        continue;
      }
      const size = typed ? 5 : 8;
      const take = Math.min(size - header.length, chunk.length - at);
      header = Buffer.concat([header, chunk.subarray(at, at + take)]);
      at += take;
      if (header.length < size) break;
      if (typed) {
        const type = String.fromCharCode(header[0]);
        skip = header.readInt32BE(1) - 4;
        if (type === 'Z') wantStatus = true;
        else onMessage(type);
      } else {
        // StartupMessage (protocol 3.0) ends the untyped part; an SSL or GSS request does not.
        if (header.readInt32BE(4) === 196608) typed = true;
        skip = header.readInt32BE(0) - 8;
      }
      header = Buffer.alloc(0);
    }
  };
}

function proxy(client) {
  totals.connections += 1;
  const upstream = net.connect(Number(process.env.UPSTREAM_PORT), process.env.UPSTREAM_HOST ?? '127.0.0.1');
  let inFlight = false;
  let sentAt = 0;
  let lastReadyAt = 0;
  let status = 'I';
  let transactionStartedAt = 0;
  let position = 0;
  const clientMessages = framing(false, (type) => {
    if (type !== 'Q' && type !== 'S') return;
    const now = performance.now();
    totals.roundTrips += 1;
    position = status === 'I' ? 0 : position + 1;
    if (status !== 'I') {
      totals.roundTripsInTransaction += 1;
      totals.clientMsInTransaction += now - lastReadyAt;
      atPosition(position).clientMsBefore += now - lastReadyAt;
    }
    inFlight = true;
    sentAt = now;
  });
  const serverMessages = framing(true, (type, transactionStatus) => {
    if (type !== 'Z') return;
    const now = performance.now();
    const next = String.fromCharCode(transactionStatus);
    if (inFlight && (status !== 'I' || next !== 'I')) {
      totals.postgresMsInTransaction += now - sentAt;
      atPosition(position).roundTrips += 1;
      atPosition(position).postgresMs += now - sentAt;
    }
    if (status === 'I' && next !== 'I') {
      transactionStartedAt = sentAt;
      // The round trip that began it was counted outside a transaction: count it inside.
      totals.roundTripsInTransaction += 1;
    }
    if (status !== 'I' && next === 'I') {
      totals.transactions += 1;
      totals.transactionMs += now - transactionStartedAt;
    }
    status = next;
    inFlight = false;
    lastReadyAt = now;
  });
  client.on('data', clientMessages);
  upstream.on('data', serverMessages);
  client.pipe(upstream);
  upstream.pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
}

net.createServer(proxy).listen(Number(process.env.LISTEN_PORT), '127.0.0.1');
http.createServer((_req, res) => res.end(JSON.stringify(totals))).listen(Number(process.env.STATS_PORT), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
