/** What a daemon was started with, and what it reports about its machine. */
import { Context, type Option, type Redacted } from "effect"
import type { OrgId } from "../domain/shared/Ids.ts"
import { arch, hostname } from "node:os"

export const DAEMON_VERSION = "0.1.0"

export class DaemonConfig extends Context.Service<DaemonConfig, {
  /** The server's base address, e.g. http://127.0.0.1:8080/ (ends with a slash). */
  readonly server: URL
  /** A daemon token or a personal API key. */
  readonly token: Redacted.Redacted<string>
  readonly machineName: string
  /** With a personal API key: the organization the machine registers into, at every registration (`--org`). */
  readonly organization: Option.Option<OrgId>
  /** Real paths of the machine's directories. */
  readonly directories: ReadonlyArray<string>
}>()("daemon/DaemonConfig") {}

const ARCHITECTURES: Readonly<Record<string, string>> = { x64: "x86_64", ia32: "x86", arm64: "arm64", arm: "arm" }

/** The machine as registration and the hello describe it. */
export const machineFacts = () => ({
  hostname: hostname(),
  platform: process.platform,
  architecture: ARCHITECTURES[arch()] ?? arch(),
  daemon_version: DAEMON_VERSION
})
