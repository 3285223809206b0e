import { MAX_URL_TEMPLATE, URL_PLACEHOLDERS } from '../commands/ucp/catalog-feed.ts';

const placeholder = `\\{(?:${URL_PLACEHOLDERS.join('|')})\\}`;

/**
 * `urlTemplateProblem` (commands/ucp/catalog-feed.ts) as the document states it, for clients that validate before they
 * send: an http(s) URL without credentials that names at least one placeholder, and no brace but a placeholder's. The
 * command's check stays the rule; test/unit/documented-rules.unit.spec.ts holds the two to the same answers.
 */
export const urlTemplateSchema = {
  maxLength: MAX_URL_TEMPLATE,
  pattern: `^[Hh][Tt][Tt][Pp][Ss]?://(?![^/?#]*@)[^{}]*${placeholder}(?:[^{}]|${placeholder})*$`,
} as const;
