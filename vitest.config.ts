import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real local servers (fake Slack, fake Kubernetes, Alertmanager) and mostly wait on them:
    // with 2 workers a 2-core machine sat at ~120% CPU (328 s); 4 reached 183% (278 s). 3 keeps headroom
    // for the timing-sensitive e2e suites.
    maxWorkers: 3,
    // CI collects a JSON report beside the console one (VIGIL_REPORT_DIR); a developer's run writes nothing.
    ...(process.env['VIGIL_REPORT_DIR']
      ? { reporters: ['default', 'json'], outputFile: { json: `${process.env['VIGIL_REPORT_DIR']}/vitest.json` } }
      : {}),
  },
});
