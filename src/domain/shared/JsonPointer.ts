/** JSON Pointers (RFC 6901): `["tools", "a/b", 0]` is `/tools/a~1b/0`; the whole document is "". */
export const pointerOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key) => "/" + String(key).replaceAll("~", "~0").replaceAll("/", "~1")).join("")
