// Renders the jobs page of Nomad's web UI in headless Chromium and prints what it
// shows. Used by cluster/nomad-ui-check.sh; see chromium-render.mjs for why it
// cannot be `chromium --dump-dom`.
//
// usage: node --experimental-websocket nomad-ui-render.mjs URL [SECONDS]
// (NOMAD_UI_SCREENSHOT=FILE.png also saves a screenshot of the rendered page;
// NOMAD_UI_EXPECT_JOBS=N, the number of jobs the API lists, makes it wait for rows)
// prints one JSON object ({ok, title, nav, header, jobs, empty, error}) and exits
// 0 when the jobs page rendered, 1 when it did not.
import { renderUntil } from "./chromium-render.mjs";

const [url, secondsArg] = process.argv.slice(2);
if (!url) {
  console.error("usage: nomad-ui-render.mjs URL [SECONDS]");
  process.exit(2);
}
const expectJobs = Number(process.env.NOMAD_UI_EXPECT_JOBS || 0);

// What the page shows, read inside it. The production build strips the
// data-test-* attributes, so this reads ids, classes and text.
const probe = `(() => {
  const text = (el) => (el ? el.textContent.replace(/\\s+/g, " ").trim() : null);
  const nav = [...document.querySelectorAll(".gutter .menu-list a")].map(text);
  const header = document.querySelector("#jobs-list-header");
  // a row links its job's name first; later links (allocation counts) are not names
  const jobs = [...document.querySelectorAll("table tbody tr")]
    .map((row) => row.querySelector("a[href^='/ui/jobs/']")).filter(Boolean).map(text);
  const empty = document.querySelector(".hds-application-state");
  const error = document.querySelector(".error-container, .empty-message-headline");
  return JSON.stringify({
    title: document.title, nav, header: !!header, jobs,
    empty: text(empty), error: text(error),
  });
})()`;

// rendered: the nav, the jobs header and either job rows or the empty state.
// The empty state shows while the jobs query is still out, so with
// NOMAD_UI_EXPECT_JOBS > 0 (the caller read the API) it waits for rows.
const rendered = (p) => p.nav.length > 0 && p.header && (expectJobs > 0 ? p.jobs.length > 0 : p.jobs.length > 0 || p.empty);
const shot = process.env.NOMAD_UI_SCREENSHOT;
try {
  const { ok, value } = await renderUntil(url, probe, rendered, { seconds: Number(secondsArg || 45), screenshot: shot });
  console.log(JSON.stringify(ok
    ? { ok, url, ...value, ...(shot ? { screenshot: shot } : {}) }
    : { ok, url, reason: "the jobs page did not render before the deadline", ...value }));
  process.exit(ok ? 0 : 1);
} catch (e) {
  console.log(JSON.stringify({ ok: false, url, reason: String(e.message || e) }));
  process.exit(1);
}
