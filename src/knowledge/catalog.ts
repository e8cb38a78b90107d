import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';

/**
 * The service catalog: who owns a service, where its code lives, what it calls. Investigations use it
 * for the owner on the card, the repository whose changes join the timeline, and the dependencies whose
 * metrics and changes are checked. A YAML file (VIGIL_CATALOG_FILE):
 *
 * ```yaml
 * services:
 *   - name: checkout
 *     namespace: shop
 *     owner: S0TEAMCHECKOUT       # Slack user group id, mentioned on escalation
 *     repo: acme/checkout         # GitHub owner/name
 *     environment: production     # GitHub deployments environment
 *     dependsOn: [payments-api, checkout-db]
 *     flags: [new-checkout-flow]  # feature flags that change its behaviour
 * ```
 */
const serviceSchema = z.object({
  name: z.string().min(1),
  namespace: z.string().min(1),
  owner: z.string().optional(),
  repo: z
    .string()
    .regex(/^[\w.-]+\/[\w.-]+$/, 'expects owner/name')
    .optional(),
  environment: z.string().optional(),
  dependsOn: z.array(z.string()).default([]),
  flags: z.array(z.string()).default([]),
});

export const catalogSchema = z.object({ services: z.array(serviceSchema).default([]) });

export type ServiceEntry = z.infer<typeof serviceSchema>;

export class ServiceCatalog {
  constructor(readonly services: ServiceEntry[] = []) {}

  find(namespace: string | undefined, name: string): ServiceEntry | undefined {
    return this.services.find((s) => s.name === name && (!namespace || s.namespace === namespace));
  }

  /** Services that depend on `name` (its callers), for scope. */
  dependentsOf(name: string): ServiceEntry[] {
    return this.services.filter((s) => s.dependsOn.includes(name));
  }

  static parse(text: string, where = 'catalog'): ServiceCatalog {
    const parsed = catalogSchema.safeParse(parse(text) ?? {});
    if (!parsed.success) {
      throw new Error(`${where}: invalid service catalog: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    }
    return new ServiceCatalog(parsed.data.services);
  }

  static load(file: string | undefined): ServiceCatalog {
    if (!file) return new ServiceCatalog();
    return ServiceCatalog.parse(readFileSync(file, 'utf8'), file);
  }
}
