/**
 * A minimal local Docker image that can run the platform's daemon, for the docker provider's tests
 * (there is no registry to pull from): `docker import` of a root filesystem assembled in a temporary
 * directory from the host's own files:
 *
 * - the host's `node` (process.execPath) at /usr/local/bin/node, with every library `ldd` lists and
 *   the dynamic loader, each at the path the binary looks it up at;
 * - /bin/sh and a few coreutils (cat, ls, true, echo, env, mkdir) with their libraries, and
 *   /usr/bin/env beside /bin/env;
 * - /tmp (sticky, world-writable), /root, a minimal /etc/passwd and /etc/group.
 *
 * The project itself is not in the image: the provider mounts it read-only at its own path. The tag
 * names the node binary's version and the recipe, so the image is built once per machine (and checked
 * once per test run); a changed node gives a new tag.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

/** Bumped when the recipe below changes, so that an image of an older recipe is not reused. */
const RECIPE = "1"

const TOOLS = ["sh", "cat", "ls", "true", "echo", "env", "mkdir"] as const

/** The image's tag: `agent-platform-test-node:<hash of the node version, its path and the recipe>`. */
export const DOCKER_TEST_IMAGE = `agent-platform-test-node:${
  createHash("sha256").update(`${process.version} ${process.arch} ${process.execPath} ${RECIPE}`).digest("hex").slice(0, 12)
}`

/** Where `name` is on the host's PATH. */
const which = (name: string) => {
  for (const dir of (process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin").split(":").filter((dir) => dir !== "")) {
    const candidate = join(dir, name)
    if (existsSync(candidate)) return candidate
  }
  throw new Error(`${name} is not on the PATH: cannot build the docker test image`)
}

/** The absolute paths of the shared libraries (and the loader) `binary` needs, as `ldd` lists them. */
const libraries = (binary: string): ReadonlyArray<string> => {
  const result = spawnSync("ldd", [binary], { encoding: "utf8" })
  // A static binary: ldd says so and exits 1.
  if (result.status !== 0) return []
  const paths: Array<string> = []
  for (const line of result.stdout.split("\n")) {
    const arrow = /=>\s*(\/\S+)/.exec(line)
    const bare = /^\s*(\/\S+)\s+\(/.exec(line)
    const path = arrow?.[1] ?? bare?.[1]
    if (path !== undefined) paths.push(path)
  }
  return paths
}

/** Copies the file behind `source` (symbolic links followed) to `path` in the root filesystem `root`. */
const place = (root: string, source: string, path: string, mode = 0o755) => {
  const target = join(root, path)
  mkdirSync(dirname(target), { recursive: true })
  if (existsSync(target)) return
  copyFileSync(realpathSync(source), target)
  chmodSync(target, mode)
}

/** Assembles the root filesystem in a fresh temporary directory; answers its path. */
const assemble = () => {
  const root = mkdtempSync(join(tmpdir(), "agent-platform-image-"))
  const binaries: Array<readonly [source: string, path: string]> = [[process.execPath, "/usr/local/bin/node"]]
  for (const tool of TOOLS) binaries.push([which(tool), `/bin/${tool}`])
  for (const [source, path] of binaries) {
    place(root, source, path)
    for (const library of libraries(source)) place(root, library, library)
  }
  mkdirSync(join(root, "usr", "bin"), { recursive: true })
  symlinkSync("/bin/env", join(root, "usr", "bin", "env"))
  for (const dir of ["tmp", "root", "etc"]) mkdirSync(join(root, dir), { recursive: true })
  chmodSync(join(root, "tmp"), 0o1777)
  writeFileSync(join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n")
  writeFileSync(join(root, "etc", "group"), "root:x:0:\nnogroup:x:65534:\n")
  return root
}

const imageExists = (tag: string) => spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status === 0

const build = (tag: string) => {
  const root = assemble()
  try {
    // tar streams the directory (owners as root) into `docker import`.
    execFileSync("sh", ["-c", `tar --numeric-owner --owner=0 --group=0 -C "$1" -c . | docker import - "$2"`, "sh", root, tag], {
      stdio: ["ignore", "ignore", "pipe"]
    })
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

let ensured: Promise<string> | undefined

/** The tag of the test image, built first when this Docker host does not have it (once per process). */
export const ensureDockerImage = (): Promise<string> => {
  ensured ??= Promise.resolve().then(() => {
    if (!imageExists(DOCKER_TEST_IMAGE)) build(DOCKER_TEST_IMAGE)
    return DOCKER_TEST_IMAGE
  })
  return ensured
}
