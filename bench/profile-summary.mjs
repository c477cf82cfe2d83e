// `node bench/profile-summary.mjs <file> [top]`: where a profile's time or memory went, as the
// bench README's "where the time goes" tables count it. Reads a V8 CPU profile (`.cpuprofile`,
// from `--cpu-prof`) or a sampling heap profile (`.heapprofile`, from `--heap-prof` or from
// `lib/allocation-sampling.cjs`), and prints:
// - by owner: each sample given to the nearest frame above it (itself included) that belongs to a
//   library (its package name under node_modules), to this workspace (`apps/ingest`,
//   `packages/billing-core`, …) or to the bench; a sample with no such frame keeps Node's own
//   module (`node:internal`) or V8's label (`(garbage collector)`, `writev`);
// - by function: self time (or self bytes) of each function, with its owner and line;
// - with `--inclusive=<prefix>,<prefix>` (CPU profiles): for each prefix, the busy time of the
//   samples with a frame on their stack whose `function owner:line` label (as the by-function
//   table prints it) starts with it, each sample counted once per prefix (e.g.
//   `--inclusive="verifyCertificateChain ,X509Certificate ,createPublicKey "`).
// Shares are of the busy time (idle samples left out) or of the sampled bytes.
// `summarizeProfile` answers the same tables as data (the spend phase puts the api's in its JSON).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The owner of a script URL: a package, a workspace folder, a bench file, or Node's module. */
function ownerOf(url) {
  if (!url) return null;
  const library = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/);
  if (library) return library[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const workspace = url.match(/\/(apps|packages)\/([^/]+)\//);
  if (workspace) return `${workspace[1]}/${workspace[2]}`;
  const bench = url.match(/\/(bench\/.+)$/);
  return bench ? bench[1] : url;
}

/** The nearest owner that is not Node's own module, walking from the frame to the root. */
function nearestOwner(path) {
  for (let i = path.length - 1; i >= 0; i -= 1) {
    const owner = ownerOf(path[i].callFrame.url);
    if (owner && !owner.startsWith('node:')) return owner;
  }
  const self = path[path.length - 1].callFrame;
  return ownerOf(self.url) ?? (self.functionName || '(anonymous)');
}

function label(callFrame) {
  const owner = ownerOf(callFrame.url) ?? '(native)';
  return `${callFrame.functionName || '(anonymous)'} ${owner}:${callFrame.lineNumber + 1}`;
}

function add(map, key, value) {
  map.set(key, (map.get(key) ?? 0) + value);
}

/**
 * A parsed profile's busy time (CPU, µs; idle left out) or sampled bytes (heap) by owner and by
 * function, largest first: `{ unit, total, idle, byOwner, byFunction, inclusive }` (each a list of
 * `[key, amount]`; `inclusive` in the order of the `inclusive` label prefixes given, CPU only), or
 * null when it is neither kind.
 */
export function summarizeProfile(profile, { inclusive = [] } = {}) {
  const byOwner = new Map();
  const byFunction = new Map();
  const byPrefix = new Map(inclusive.map((prefix) => [prefix, 0]));
  let total = 0;
  let idle = 0;
  let unit;

  if (Array.isArray(profile.nodes)) {
    // CPU profile: a flat node list with child ids; samples are node ids, timeDeltas µs.
    unit = 'µs';
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const parents = new Map();
    for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
    const selfTime = new Map();
    profile.samples.forEach((id, i) => {
      add(selfTime, id, profile.timeDeltas[i] ?? 0);
    });
    for (const [id, time] of selfTime) {
      const node = nodes.get(id);
      if (node.callFrame.functionName === '(idle)') {
        idle += time;
        continue;
      }
      const path = [];
      for (let at = node; at; at = nodes.get(parents.get(at.id))) path.unshift(at);
      total += time;
      add(byOwner, nearestOwner(path), time);
      add(byFunction, label(node.callFrame), time);
      if (inclusive.length > 0) {
        const labels = path.map((frame) => label(frame.callFrame));
        for (const prefix of inclusive) {
          if (labels.some((text) => text.startsWith(prefix))) add(byPrefix, prefix, time);
        }
      }
    }
  } else if (profile.head) {
    // Sampling heap profile: a tree; selfSize is the bytes sampled at that allocation site.
    unit = 'bytes';
    const walk = (node, path) => {
      const here = [...path, node];
      if (node.selfSize > 0) {
        total += node.selfSize;
        add(byOwner, nearestOwner(here), node.selfSize);
        add(byFunction, label(node.callFrame), node.selfSize);
      }
      for (const child of node.children ?? []) walk(child, here);
    };
    walk(profile.head, []);
  } else {
    return null;
  }
  const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]);
  return { unit, total, idle, byOwner: sorted(byOwner), byFunction: sorted(byFunction), inclusive: [...byPrefix] };
}

function printSummary(file, top, inclusive) {
  const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')), { inclusive });
  if (!summary) {
    console.error(`${file}: neither a CPU profile nor a sampling heap profile`);
    process.exit(2);
  }
  const { unit, total, idle } = summary;
  const amount = (value) => (unit === 'µs' ? `${(value / 1e6).toFixed(2)} s` : `${(value / 1e6).toFixed(1)} MB`);
  const show = (title, list, count = top) => {
    console.log(`\n${title}`);
    for (const [key, value] of list.slice(0, count)) {
      console.log(`${((100 * value) / total).toFixed(1).padStart(6)} %  ${amount(value).padStart(9)}  ${key}`);
    }
  };
  console.log(
    unit === 'µs'
      ? `${file}: busy ${amount(total)}, idle ${amount(idle)} (shares below are of the busy time)`
      : `${file}: ${amount(total)} sampled (shares below are of the sampled bytes)`,
  );
  show('by owner (nearest library, workspace package or bench file above the sample)', summary.byOwner);
  show(`by function (self ${unit === 'µs' ? 'time' : 'bytes'})`, summary.byFunction);
  if (unit === 'µs' && inclusive.length > 0) {
    show('inclusive (samples with a frame whose label starts with the prefix)', summary.inclusive, inclusive.length);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const option = args.find((arg) => arg.startsWith('--inclusive='));
  const [file, topArg = '30'] = args.filter((arg) => arg !== option);
  if (!file) {
    console.error(
      'usage: node bench/profile-summary.mjs <file.cpuprofile|file.heapprofile> [top] [--inclusive=<label prefix>,…]',
    );
    process.exit(2);
  }
  const inclusive = option ? option.slice('--inclusive='.length).split(',').filter(Boolean) : [];
  printSummary(file, Number(topArg), inclusive);
}
