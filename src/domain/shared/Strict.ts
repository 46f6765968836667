/**
 * The annotation of a request body that takes no property it does not list: an unknown property
 * is `invalid_request` instead of being dropped.
 */
export const strict = { parseOptions: { onExcessProperty: "error" } } as const
