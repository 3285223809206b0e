/** `{id}` or `{sku}`: the placeholders a product URL template may name. */
const placeholder = '\\{(?:id|sku)\\}';

/**
 * `urlTemplateProblem` (commands/ucp) as the document states it, for clients that validate before they send: an
 * http(s) URL of at most 2000 characters, without credentials, that names at least one placeholder and has no brace
 * but a placeholder's. The command's check stays the rule; test/unit/documented-rules.unit.spec.ts holds the two to
 * the same answers.
 */
export const urlTemplateSchema = {
  maxLength: 2_000,
  pattern: `^[Hh][Tt][Tt][Pp][Ss]?://(?![^/?#]*@)[^{}]*${placeholder}(?:[^{}]|${placeholder})*$`,
} as const;
