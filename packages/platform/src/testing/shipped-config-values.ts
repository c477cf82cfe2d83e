import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The repository's root (this file is packages/platform/{src,dist}/testing/). */
export const repositoryRoot = path.resolve(__dirname, '../../../..');

/**
 * Every `NAME=value` / `NAME: value` line of a file the repository ships (.env.example,
 * docker-compose.yml, infra manifests), commented-out ones included, quotes removed: what tests
 * check against the production configuration's refusal of demo and placeholder values.
 */
export function shippedConfigValues(
  file: string,
): { file: string; variable: string; value: string; commented: boolean }[] {
  return readFileSync(path.join(repositoryRoot, file), 'utf8')
    .split('\n')
    .map((line) => /^\s*(#?)\s*([A-Z][A-Z0-9_]*)\s*[:=]\s*"?([^"#]*?)"?\s*$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && (match[3] ?? '') !== '')
    .map((match) => ({ file, variable: match[2] as string, value: match[3] as string, commented: match[1] === '#' }));
}

/** The files under a folder of the repository, recursively, as repository-relative paths. */
export function repositoryFilesUnder(dir: string): string[] {
  return readdirSync(path.join(repositoryRoot, dir)).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(path.join(repositoryRoot, file)).isDirectory() ? repositoryFilesUnder(file) : [file];
  });
}

/** Every value containing a template placeholder (REPLACE_ME) that a file under infra/ ships. */
export function shippedPlaceholders(): { file: string; variable: string; value: string }[] {
  return repositoryFilesUnder('infra')
    .flatMap(shippedConfigValues)
    .filter(({ value }) => /REPLACE_ME/i.test(value));
}
