/** The configuration capability: secrets, model provider configs, models, skills, agent configs. */
import { Layer } from "effect"
import { AgentConfigs } from "./AgentConfigs.ts"
import { ModelProviderConfigs } from "./ModelProviderConfigs.ts"
import { Models } from "./Models.ts"
import { Secrets } from "./Secrets.ts"
import { Skills } from "./Skills.ts"

export const ConfigurationLive = Layer.mergeAll(
  Secrets.layer,
  ModelProviderConfigs.layer,
  Models.layer,
  Skills.layer,
  AgentConfigs.layer
)
