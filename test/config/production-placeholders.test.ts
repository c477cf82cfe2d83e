import { shippedPlaceholders } from '@tally/platform/testing';
import { apiEnvSchema } from '../../apps/api/src/config';
import { ingestEnvSchema } from '../../apps/ingest/src/config';
import { workerEnvSchema } from '../../apps/worker/src/config';

/**
 * Every template placeholder infra/ ships (infra/k8s/secret.template.yaml: `whsec_REPLACE_ME`,
 * `Bearer REPLACE_ME`, …) stops each process that reads its variable at start under
 * NODE_ENV=production, as a demo secret does (product.md "What a void means…": "A placeholder value
 * stops a production process at start"). The placeholders are read from the files, so a new one
 * cannot slip in unchecked.
 */
const apps: [string, typeof ingestEnvSchema | typeof apiEnvSchema | typeof workerEnvSchema][] = [
  ['ingest', ingestEnvSchema],
  ['api', apiEnvSchema],
  ['worker', workerEnvSchema],
];

const base = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://tally:s3cret@db:5432/tally',
  REDIS_URL: 'redis://redis:6379',
  APP_API_KEYS: 'app_0perator',
  ADMIN_API_KEYS: 'admin_0perator',
};

describe('template placeholders in production', () => {
  const placeholders = shippedPlaceholders();

  it('reads a dozen placeholders from infra/', () => {
    expect(placeholders.length).toBeGreaterThanOrEqual(12);
  });

  it.each(apps)(
    '%s refuses to start with any placeholder in a variable it reads, and starts with a real value there',
    (_app, schema) => {
      let read = 0;
      for (const { file, variable, value } of placeholders) {
        const real = schema.safeParse({ ...base, [variable]: value.replace(/REPLACE_ME/gi, 'c2VjcmV0') });
        expect({ file, variable, ok: real.success }).toEqual({ file, variable, ok: true });
        if (!real.success || !(variable in (real.data as object))) continue; // a variable this process does not read
        read += 1;
        const placeholder = schema.safeParse({ ...base, [variable]: value });
        // Refused by name (or by the variable's own format first, as a whsec_ secret is).
        const refused = placeholder.success ? [] : placeholder.error.issues.map((issue) => String(issue.path[0]));
        expect({ file, variable, refused: [...new Set(refused)] }).toEqual({ file, variable, refused: [variable] });
      }
      expect(read).toBeGreaterThanOrEqual(4);
    },
  );
});
