/** The names of the per-file copies of the test database (perFileDatabase.ts, globalSetup.ts). */
import { randomBytes } from "node:crypto"

/** A new copy's name: the template's, `_`, and ten hex digits. */
export const newCopyName = (template: string) => `${template}_${randomBytes(5).toString("hex")}`

/** Whether `name` is the name of a copy of `template`. */
export const isCopyOf = (template: string, name: string) =>
  name.length === template.length + 11 && name.startsWith(`${template}_`) && /^[0-9a-f]{10}$/.test(name.slice(template.length + 1))
