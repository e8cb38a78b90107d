import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real local servers (fake Slack, fake Kubernetes, Alertmanager); keep the 2-core machine calm.
    maxWorkers: 2,
    // CI collects a JSON report beside the console one (VIGIL_REPORT_DIR); a developer's run writes nothing.
    ...(process.env['VIGIL_REPORT_DIR']
      ? { reporters: ['default', 'json'], outputFile: { json: `${process.env['VIGIL_REPORT_DIR']}/vitest.json` } }
      : {}),
  },
});
