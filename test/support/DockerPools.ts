/**
 * The body of a docker machine pool that the API accepts (`POST /v1/orgs/{orgID}/machine-pools`):
 * named `builders`, its sizes within its totals, its image `node:22`, which no test machine's
 * Docker host has (no registry is reachable): a machine the pool starts fails to start.
 */
export const dockerPoolBody = (authSecretId: string) => ({
  name: "builders",
  provider: "docker",
  provider_auth_secret_id: authSecretId,
  default_machine_provider_options: { image: "node:22" },
  max_total_machines: 4,
  default_machine_cpu: 2,
  default_machine_memory_mb: 2048,
  max_total_cpu: 8,
  max_total_memory_mb: 8192
})
