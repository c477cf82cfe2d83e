/**
 * The console's one stylesheet, served from the console itself (`/admin/console/console.css`) so
 * the CSP can stay `style-src 'self'`: no inline style, no external asset. Sized for a laptop
 * screen; focus is always visible for keyboard use.
 */
export const consoleCss = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #5b6470; --line: #d5dae0; --accent: #0b5cad;
  --bad: #a3160b; --warn: #8a5a00; --good: #1e6b2f; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { background: #12263f; color: #fff; padding: 8px 20px; display: flex; gap: 20px; align-items: center; flex-wrap: wrap; }
header a { color: #fff; text-decoration: none; padding: 4px 6px; border-radius: 3px; }
header a[aria-current="page"] { background: #2d4a6e; }
header .brand { font-weight: 700; margin-right: 8px; }
header form { margin-left: auto; display: flex; gap: 6px; align-items: center; }
header label { font-size: 13px; }
main { padding: 16px 20px 40px; max-width: 1400px; }
h1 { font-size: 20px; margin: 4px 0 12px; }
h2 { font-size: 16px; margin: 22px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid #f5a623; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td .mono, td a, td code { overflow-wrap: anywhere; }
th { background: #eef1f4; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code.wrap { overflow-wrap: anywhere; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #fff; border: 1px solid var(--line); padding: 10px; overflow: auto; max-height: 480px; white-space: pre-wrap; word-break: break-all; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin: 8px 0; }
.card { background: #fff; border: 1px solid var(--line); padding: 10px 14px; min-width: 150px; }
.card .value { font-size: 24px; font-weight: 700; font-variant-numeric: tabular-nums; }
.card .label { color: var(--muted); font-size: 12px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 12px 24px; }
.muted { color: var(--muted); }
.status-failed, .bad { color: var(--bad); font-weight: 600; }
.status-received, .status-processing, .status-pending, .warn { color: var(--warn); font-weight: 600; }
.status-processed, .status-delivered, .good { color: var(--good); }
.status-not-configured { color: var(--muted); font-weight: 600; }
.notice { background: #e7f3ea; border: 1px solid #9cc9a6; padding: 8px 12px; margin: 0 0 12px; }
.notice.error { background: #fbeaea; border-color: #e3a3a3; }
form.inline { display: inline; margin: 0; }
button { font: inherit; padding: 3px 10px; border: 1px solid #7a8899; background: #fff; border-radius: 3px; cursor: pointer; }
button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
input, select { font: inherit; padding: 3px 6px; border: 1px solid #9aa5b1; border-radius: 3px; }
.filters { display: flex; gap: 10px; flex-wrap: wrap; align-items: end; background: #fff; border: 1px solid var(--line); padding: 8px 10px; margin-bottom: 10px; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
.pager { margin: 8px 0; display: flex; gap: 16px; }
.chart { background: #fff; border: 1px solid var(--line); max-width: 100%; height: auto; }
.chart .line { fill: none; stroke: var(--accent); stroke-width: 2; }
.chart .band { fill: #0b5cad22; stroke: none; }
.chart .axis { stroke: #7a8899; }
.chart .grid { stroke: #d5dae0; stroke-dasharray: 3 3; }
.chart .bar { fill: var(--accent); }
.chart .bar.bad { fill: var(--bad); }
.sparks { display: flex; gap: 12px; flex-wrap: wrap; margin: 8px 0; }
figure.spark { margin: 0; }
figure.spark figcaption { font-size: 12px; color: var(--muted); }
.chart .dot { fill: var(--accent); }
.chart .tick { font-size: 11px; fill: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; background: #fff; border: 1px solid var(--line); padding: 8px 12px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.skip { position: absolute; left: -1000px; }
.skip:focus { left: 8px; top: 8px; background: #fff; color: var(--accent); padding: 4px; z-index: 2; }
`;
