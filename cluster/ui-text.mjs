// Waits until a web page, rendered in headless Chromium, shows every given
// text, and prints what it found: for web UIs that keep blocking queries open
// (see chromium-render.mjs). Used by the integration tests for Consul's and
// VictoriaLogs' UIs.
//
// usage: node --experimental-websocket ui-text.mjs URL SECONDS TEXT...
// prints {ok, url, title, missing, text} (text: the page's first 100 000
// characters) and exits 0 when every TEXT showed before the deadline.
import { renderUntil } from "./chromium-render.mjs";

const [url, secondsArg, ...texts] = process.argv.slice(2);
if (!url || texts.length === 0) {
  console.error("usage: ui-text.mjs URL SECONDS TEXT...");
  process.exit(2);
}
const probe = `JSON.stringify({ title: document.title, text: document.body ? document.body.innerText : "" })`;
const missing = (p) => texts.filter((t) => !p.text.includes(t));
try {
  const { ok, value } = await renderUntil(url, probe, (p) => missing(p).length === 0, { seconds: Number(secondsArg) });
  const page = value || { title: null, text: "" };
  console.log(JSON.stringify({ ok, url, title: page.title, missing: missing(page), text: page.text.slice(0, 100000) }));
  process.exit(ok ? 0 : 1);
} catch (e) {
  console.log(JSON.stringify({ ok: false, url, reason: String(e.message || e) }));
  process.exit(1);
}
