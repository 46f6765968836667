import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`
  yield* sql`
    CREATE TABLE organizations (
      id text PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE org_members (
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (org_id, user_id)
    )`
  yield* sql`CREATE INDEX org_members_user_idx ON org_members (user_id)`
  yield* sql`
    CREATE TABLE projects (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX projects_org_name_key ON projects (org_id, name)`
  yield* sql`
    CREATE TABLE project_members (
      project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('admin', 'member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, user_id)
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      name text NOT NULL,
      user_id text REFERENCES users ON DELETE CASCADE,
      org_id text REFERENCES organizations ON DELETE CASCADE,
      role text CHECK (role IN ('admin', 'member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((user_id IS NULL) <> (org_id IS NULL)),
      CHECK ((org_id IS NULL) = (role IS NULL))
    )`
  yield* sql`CREATE INDEX api_keys_user_idx ON api_keys (user_id) WHERE user_id IS NOT NULL`
  yield* sql`CREATE INDEX api_keys_org_idx ON api_keys (org_id) WHERE org_id IS NOT NULL`
  yield* sql`
    CREATE TABLE org_invitations (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX org_invitations_email_key ON org_invitations (org_id, lower(email))`
})
