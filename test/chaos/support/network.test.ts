import { execFile, execFileSync } from 'node:child_process';
import net from 'node:net';
import { networkFaultsAvailable, PodNetwork } from './network';

// The partition harness itself: a pod reaches a 127.0.0.1 server through its host end, a cut
// makes the connection hang (no refusal, no reset) until the rule goes, and destroy leaves
// nothing of the run behind. Needs root and nftables, as the partition scenarios do; elsewhere
// it is skipped, saying why.
const available = networkFaultsAvailable();
const describeIfAvailable = available.ok ? describe : describe.skip;
if (!available.ok) process.stdout.write(`network.test.ts skipped: ${available.reason}\n`);

/** From inside the pod: connect, send "ping", print the answer, "timeout" after 1.5 s, or the error code. */
const client = `
const net = require('node:net');
const socket = net.connect(Number(process.argv[2]), process.argv[1]);
const timer = setTimeout(() => { process.stdout.write('timeout'); process.exit(0); }, 1500);
socket.on('connect', () => socket.write('ping'));
socket.on('data', (data) => { clearTimeout(timer); process.stdout.write(String(data)); process.exit(0); });
socket.on('error', (error) => { clearTimeout(timer); process.stdout.write('error:' + error.code); process.exit(0); });
`;

describeIfAvailable('the partition harness (network.ts)', () => {
  let server: net.Server;
  let port = 0;
  beforeAll(async () => {
    server = net.createServer((socket) => socket.on('data', () => socket.end('pong')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reaches 127.0.0.1 from a pod, hangs across a cut, heals, and leaves nothing behind', async () => {
    const network = PodNetwork.create('test');
    const pod = network.addPod('probe');
    const ask = () =>
      new Promise<string>((resolve, reject) => {
        const [command, args] = pod.wrap(process.execPath, ['-e', client, pod.hostAddress, String(port)]);
        execFile(command, args, { timeout: 10_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
      });
    try {
      expect(await ask()).toBe('pong');
      const cut = pod.cut([{ port, name: 'the server' }]);
      // Silent: neither refused nor reset, the connection just gets no answer.
      expect(await ask()).toBe('timeout');
      cut.heal();
      expect(await ask()).toBe('pong');
      const everything = pod.cut(['everything']);
      expect(await ask()).toBe('timeout');
      everything.heal();
      expect(await ask()).toBe('pong');
    } finally {
      network.destroy();
    }
    expect(execFileSync('ip', ['netns', 'list']).toString()).not.toContain(pod.namespace);
    expect(() => execFileSync('ip', ['link', 'show', pod.hostVeth], { stdio: 'pipe' })).toThrow();
    expect(execFileSync('nft', ['list', 'tables']).toString()).not.toContain(network.table);
  }, 60_000);
});
