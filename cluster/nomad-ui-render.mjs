// Renders a page of Nomad's web UI in headless Chromium and prints what it shows.
// Used by cluster/nomad-ui-check.sh. `chromium --dump-dom` cannot do this job: it
// dumps the DOM at the load event, before Ember has rendered the route, and with
// --virtual-time-budget it never returns, because the jobs page keeps a blocking
// query open and virtual time stands still while a fetch is pending. So this
// drives Chromium over the DevTools protocol and polls the page until the jobs
// list has rendered, or the deadline passes.
//
// usage: node --experimental-websocket nomad-ui-render.mjs URL [SECONDS]
// (NOMAD_UI_SCREENSHOT=FILE.png also saves a screenshot of the rendered page;
// NOMAD_UI_EXPECT_JOBS=N, the number of jobs the API lists, makes it wait for rows)
// prints one JSON object ({ok, title, nav, header, jobs, empty, error}) and exits
// 0 when the jobs page rendered, 1 when it did not.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, secondsArg] = process.argv.slice(2);
if (!url) {
  console.error("usage: nomad-ui-render.mjs URL [SECONDS]");
  process.exit(2);
}
const expectJobs = Number(process.env.NOMAD_UI_EXPECT_JOBS || 0);
const deadline = Date.now() + 1000 * Number(secondsArg || 45);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

const profile = mkdtempSync(join(tmpdir(), "nomad-ui-render-"));
const chrome = spawn(
  "chromium",
  [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1280,900",
    // port 0: Chromium picks a free port and writes it to DevToolsActivePort
    "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
    `--user-data-dir=${profile}`, "about:blank",
  ],
  // its own process group, so that finish() stops its helper processes too
  { stdio: ["ignore", "ignore", "pipe"], detached: true },
);
let chromeErr = "";
chrome.stderr.on("data", (d) => { chromeErr = (chromeErr + d).slice(-4000); });

let finished = false;
async function finish(code, result) {
  if (finished) return;
  finished = true;
  console.log(JSON.stringify(result));
  // stop the whole group and wait, before removing the profile: Chromium's helper
  // processes write to it until they are gone
  const exited = new Promise((r) => (chrome.exitCode !== null ? r() : chrome.once("exit", r)));
  const signal = (sig) => { try { process.kill(-chrome.pid, sig); } catch { /* already gone */ } };
  signal("SIGTERM");
  await Promise.race([exited, sleep(5000)]);
  signal("SIGKILL");
  await sleep(300);
  rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  process.exit(code);
}

async function devtoolsPort() {
  while (Date.now() < deadline) {
    try {
      return readFileSync(join(profile, "DevToolsActivePort"), "utf8").split("\n")[0];
    } catch {
      await sleep(200);
    }
  }
  throw new Error(`chromium wrote no DevToolsActivePort; its stderr: ${chromeErr}`);
}

async function main() {
  const port = await devtoolsPort();
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === "page");
  if (!page) throw new Error("chromium has no page target");
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((ok, bad) => { ws.onopen = ok; ws.onerror = () => bad(new Error("devtools websocket failed")); });
  let id = 0;
  const pending = new Map();
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); }
  };
  const call = (method, params = {}) => new Promise((ok) => {
    pending.set(++id, ok);
    ws.send(JSON.stringify({ id, method, params }));
  });

  const nav = await call("Page.navigate", { url });
  if (nav.result?.errorText) throw new Error(`navigating to ${url}: ${nav.result.errorText}`);
  let last = null;
  while (Date.now() < deadline) {
    await sleep(500);
    const r = await call("Runtime.evaluate", { expression: probe, returnByValue: true });
    if (!r.result?.result?.value) continue;
    last = JSON.parse(r.result.result.value);
    // rendered: the nav, the jobs header and either job rows or the empty state.
    // The empty state shows while the jobs query is still out, so with
    // NOMAD_UI_EXPECT_JOBS > 0 (the caller read the API) it waits for rows.
    const listed = expectJobs > 0 ? last.jobs.length > 0 : last.jobs.length > 0 || last.empty;
    if (last.nav.length > 0 && last.header && listed) {
      const shot = process.env.NOMAD_UI_SCREENSHOT;
      if (shot) {
        const png = await call("Page.captureScreenshot", { format: "png" });
        writeFileSync(shot, Buffer.from(png.result.data, "base64"));
      }
      return finish(0, { ok: true, url, ...last, ...(shot ? { screenshot: shot } : {}) });
    }
  }
  finish(1, { ok: false, url, reason: "the jobs page did not render before the deadline", ...last });
}

main().catch((e) => finish(1, { ok: false, url, reason: String(e.message || e) }));
