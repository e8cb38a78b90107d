import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests start real local servers (fake Slack, fake Kubernetes, Alertmanager); keep the 2-core machine calm.
    maxWorkers: 2,
  },
});
