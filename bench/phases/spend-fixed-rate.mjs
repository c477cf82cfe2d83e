// The spend phase's open-loop runs (lib/open-loop.mjs: latency from each request's scheduled
// time): both HTTP contenders at half the minimal endpoint's maximum (the target's rate), and,
// report only, at half Tally's own maximum, a rate Tally sustains while it is below the first;
// rounds alternate the order, each run after a CHECKPOINT and a warm-up second at its rate that
// the figures leave out (reported apart as `warmupP99Ms`).
import { alternated } from '../context.mjs';
import { runOpenLoop } from '../lib/open-loop.mjs';
import { median, round } from '../lib/stats.mjs';

/**
 * `rates`: `{ minimalHalf, tallyHalf }` debits a second; `servers`: the contenders' `{ url }`;
 * `requestsOf(target, tag)`: request n's `{ path, body }`; `answered`: 201s counted per side;
 * `warmupSeconds`: the load before each measured run (runOpenLoop's).
 * Answers the rounds: per round, each `<target>@<rate name>` run.
 */
export async function runFixedRates(
  ctx,
  pool,
  { rates, servers, requestsOf, appKey, seconds, warmupSeconds, rounds, answered },
) {
  const runs = [
    ['tally', 'minimalHalf'],
    ['minimal', 'minimalHalf'],
    ['tally', 'tallyHalf'],
    ['minimal', 'tallyHalf'],
  ];
  const fixed = [];
  for (let pass = 0; pass < rounds; pass += 1) {
    const results = {};
    for (const [target, rateName] of alternated(runs, pass)) {
      await ctx.checkpoint(pool);
      const requests = requestsOf(target, `f${pass}-${target}-${rateName}`);
      const result = await runOpenLoop({
        url: servers[target].url,
        rate: rates[rateName],
        durationSeconds: seconds,
        warmupSeconds,
        okStatus: 201,
        next: (index) => ({
          ...requests(index),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${appKey}` },
        }),
      });
      answered[target] += result.ok;
      results[`${target}@${rateName}`] = result;
    }
    fixed.push(results);
    ctx.log(
      `spend fixed rate round ${pass + 1}: ${runs
        .map(([target, rateName]) => {
          const run = results[`${target}@${rateName}`];
          return `${target} at ${rates[rateName]}/s p50 ${round(run.p50, 1)} p99 ${round(run.p99, 1)} ms (not 201: ${run.non200 + run.errors})`;
        })
        .join('; ')}`,
    );
  }
  return fixed;
}

/** The figures: medians over the rounds per target and rate, and the rounds' p99s for byRound. */
export function fixedRateFigures(fixed, rates) {
  const of = (key) => ({
    p50Ms: round(median(fixed.map((entry) => entry[key].p50)), 1),
    p99Ms: round(median(fixed.map((entry) => entry[key].p99)), 1),
    p999Ms: round(median(fixed.map((entry) => entry[key].p999)), 1),
    notAnswered201: fixed.reduce((sum, entry) => sum + entry[key].non200 + entry[key].errors, 0),
    generatorMaxLagMs: round(Math.max(...fixed.map((entry) => entry[key].generatorMaxLagMs)), 1),
    // The warm-up's p99 (left out of p99Ms): the start-up burst after each CHECKPOINT.
    warmupP99Ms: fixed[0]?.[key].warmup ? round(median(fixed.map((entry) => entry[key].warmup.p99)), 1) : null,
  });
  const figures = {
    rate: rates.minimalHalf,
    tally: of('tally@minimalHalf'),
    minimal: of('minimal@minimalHalf'),
    atTallysHalf: { rate: rates.tallyHalf, tally: of('tally@tallyHalf'), minimal: of('minimal@tallyHalf') },
  };
  const byRound = {
    'fixedRate.tally.p99Ms': fixed.map((entry) => entry['tally@minimalHalf'].p99),
    'fixedRate.minimal.p99Ms': fixed.map((entry) => entry['minimal@minimalHalf'].p99),
    'fixedRate.atTallysHalf.tally.p99Ms': fixed.map((entry) => entry['tally@tallyHalf'].p99),
    'fixedRate.atTallysHalf.minimal.p99Ms': fixed.map((entry) => entry['minimal@tallyHalf'].p99),
  };
  return { figures, byRound };
}
