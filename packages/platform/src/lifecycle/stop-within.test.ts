import { capturePinoLines } from '../testing/log-lines';
import { stopWithin } from './stop-within';

const capturingLogger = () => capturePinoLines<{ msg: string; step?: string }>('info');

const never = () => new Promise<void>(() => undefined);

describe('stopWithin', () => {
  it('ends within its budget when a step never finishes (a silent path), names what it abandoned and still runs the later steps', async () => {
    const { logger, lines } = capturingLogger();
    const ran: string[] = [];
    const started = Date.now();
    const abandoned = await stopWithin(
      200,
      [
        { name: 'roles', abandons: 'their jobs are retried', stop: never },
        {
          name: 'database pool',
          abandons: 'connections close with the process',
          stop: async () => {
            ran.push('database pool');
          },
        },
      ],
      logger,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(abandoned).toEqual(['roles']);
    expect(ran).toEqual(['database pool']);
    expect(lines.map((line) => [line.step, line.msg])).toEqual([
      ['roles', 'shutdown budget spent: abandoning roles (their jobs are retried)'],
    ]);
  });

  it('abandons nothing when every step finishes in time, and throws the first failure after running every step', async () => {
    const { logger } = capturingLogger();
    await expect(
      stopWithin(1_000, [{ name: 'a', abandons: '', stop: async () => undefined }], logger),
    ).resolves.toEqual([]);
    const ran: string[] = [];
    await expect(
      stopWithin(
        1_000,
        [
          { name: 'a', abandons: '', stop: () => Promise.reject(new Error('boom')) },
          { name: 'b', abandons: '', stop: async () => void ran.push('b') },
        ],
        logger,
      ),
    ).rejects.toThrow('boom');
    expect(ran).toEqual(['b']);
  });
});
