import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Skills, their immutable versions and project grants (docs/skills.md). A skill is owned by a
 * project or is personal to a member; a personal skill goes with the membership (the foreign key
 * on org_members cascades), and a project's skills go with the project.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE skills (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      owner_project_id text REFERENCES projects ON DELETE CASCADE,
      owner_user_id text,
      name text NOT NULL,
      description text NOT NULL,
      latest_version integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((owner_project_id IS NULL) <> (owner_user_id IS NULL)),
      FOREIGN KEY (org_id, owner_user_id) REFERENCES org_members (org_id, user_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX skills_org_idx ON skills (org_id, id)`
  yield* sql`CREATE UNIQUE INDEX skills_project_name_key ON skills (owner_project_id, name) WHERE owner_project_id IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX skills_personal_name_key ON skills (org_id, owner_user_id, name) WHERE owner_user_id IS NOT NULL`
  yield* sql`
    CREATE TABLE skill_versions (
      skill_id text NOT NULL REFERENCES skills ON DELETE CASCADE,
      version integer NOT NULL CHECK (version >= 1),
      content jsonb NOT NULL,
      size_bytes integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (skill_id, version)
    )`
  yield* sql`
    CREATE TABLE skill_grants (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      skill_id text NOT NULL REFERENCES skills ON DELETE CASCADE,
      target_project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX skill_grants_target_key ON skill_grants (skill_id, target_project_id)`
  yield* sql`CREATE INDEX skill_grants_project_idx ON skill_grants (target_project_id)`
})
