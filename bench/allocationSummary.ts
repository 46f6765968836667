/**
 * `npx tsx bench/allocationSummary.ts <file>.heapprofile [top]`: the bytes a sampled allocation
 * profile (bench/allocationProfile.ts) attributes to each file and to each function, largest first,
 * as shares of everything sampled. Functions are named by their file and line.
 */
import { readFileSync } from "node:fs"

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<ProfileNode>
}

const [file, top = "30"] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: npx tsx bench/allocationSummary.ts <file>.heapprofile [top]")
const root = (JSON.parse(readFileSync(file, "utf8")) as { readonly head: ProfileNode }).head

/** The URL without the path to node_modules or to this checkout. */
const shortUrl = (url: string) => url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(src|bench|test)\//, "$1/")

const byFile = new Map<string, number>()
const byFunction = new Map<string, number>()
let total = 0
const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes)
const pending: Array<ProfileNode> = [root]
for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
  const url = shortUrl(node.callFrame.url) || "(V8 built-ins)"
  total += node.selfSize
  add(byFile, url, node.selfSize)
  add(byFunction, `${node.callFrame.functionName || "(anonymous)"} ${url}:${node.callFrame.lineNumber + 1}`, node.selfSize)
  pending.push(...node.children)
}

const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [name, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) {
    console.log(`${(100 * bytes / total).toFixed(1).padStart(6)} %  ${name}`)
  }
}
console.log(`${(total / 2 ** 20).toFixed(0)} MiB sampled`)
print("by file", byFile)
print("by function", byFunction)
