/**
 * What the steps of compiling (Compile.ts) share: the issues found so far, each positioned at the
 * node it is about, and what each name of the definition resolved to.
 */
import type { Issue } from "../../shared/Errors.ts"
import type { SecretId } from "../../shared/Ids.ts"
import { pointerOf } from "../../shared/JsonPointer.ts"
import type { Resolutions } from "./References.ts"
import type { Anchor } from "./Source.ts"

export type Path = ReadonlyArray<PropertyKey>
export type IssueAt = (path: Path, message: string, anchor?: Anchor) => Issue

export interface CompileContext {
  readonly resolutions: Resolutions
  /** Records a problem at `path`. */
  readonly problem: (path: Path, message: string, anchor?: Anchor) => void
  /** How many problems were recorded so far. */
  readonly problemCount: () => number
  /** Records what the name at `path` resolved to (docs/agent-configs.md, "Hashes"). */
  readonly resolved: (path: Path, to: string) => void
  /** The id of the secret `name` at `path`, or a problem when no secret of that name is usable. */
  readonly secretId: (path: Path, name: string) => SecretId | undefined
}

export const makeCompileContext = (resolutions: Resolutions, issueAt: IssueAt) => {
  const issues: Array<Issue> = []
  const resolvedNames: Record<string, string> = {}
  const problem = (path: Path, message: string, anchor?: Anchor) => void issues.push(issueAt(path, message, anchor))
  const resolved = (path: Path, to: string) => void (resolvedNames[pointerOf(path)] = to)
  const context: CompileContext = {
    resolutions,
    problem,
    problemCount: () => issues.length,
    resolved,
    secretId: (path, name) => {
      const id = resolutions.secrets.get(name)
      if (id === undefined) {
        problem(
          path,
          `no secret named "${name}" is usable by this project; check the name, or grant the organization secret to the project`
        )
      } else {
        resolved(path, id)
      }
      return id
    }
  }
  return { context, issues, resolvedNames }
}
