/**
 * HTML built with a tagged template that escapes every interpolated value: a value is text unless
 * it is itself `Html` made by this tag (or an array of them). No other way to put markup in a
 * page exists here, so a user id or an event type holding `<script>` is shown, never run.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Text safe in element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => entities[char] ?? char);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  // guard: console-escape-html
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

/** A query string from parameters, leaving out empty ones (values are URL-encoded; the tag escapes the rest). */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** An `<option>` of a filter's select, selected when it is the filter's value (none: the empty one). */
export function option(value: string, selected: string | undefined, label = value): Html {
  return html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`;
}
