// Headless Chromium driven over the DevTools protocol: open a page, evaluate an
// expression in it every half second until a test on its value passes or the
// deadline comes. `chromium --dump-dom` cannot check single-page apps that keep
// a blocking query open (Nomad's and Consul's UIs): it dumps at the load event,
// before they render, and with --virtual-time-budget it never returns, because
// virtual time stands still while a fetch is pending.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// renderUntil opens url and returns {ok, value}: value is the last result of
// expression (a JSON string evaluated in the page, parsed here), ok whether
// done(value) became true before the deadline. screenshot, when set, is a PNG
// file written once done.
export async function renderUntil(url, expression, done, { seconds = 45, screenshot } = {}) {
  const deadline = Date.now() + 1000 * seconds;
  const profile = mkdtempSync(join(tmpdir(), "orchbench-chromium-"));
  const chrome = spawn(
    "chromium",
    [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1280,900",
      // port 0: Chromium picks a free port and writes it to DevToolsActivePort
      "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
      `--user-data-dir=${profile}`, "about:blank",
    ],
    // its own process group, so that stopping it stops its helper processes too
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  let chromeErr = "";
  chrome.stderr.on("data", (d) => { chromeErr = (chromeErr + d).slice(-4000); });
  try {
    let port;
    while (!port) {
      if (Date.now() > deadline) throw new Error(`chromium wrote no DevToolsActivePort; its stderr: ${chromeErr}`);
      try {
        port = readFileSync(join(profile, "DevToolsActivePort"), "utf8").split("\n")[0];
      } catch {
        await sleep(200);
      }
    }
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
    let value = null;
    while (Date.now() < deadline) {
      await sleep(500);
      const r = await call("Runtime.evaluate", { expression, returnByValue: true });
      if (!r.result?.result?.value) continue;
      value = JSON.parse(r.result.result.value);
      if (done(value)) {
        if (screenshot) {
          const png = await call("Page.captureScreenshot", { format: "png" });
          writeFileSync(screenshot, Buffer.from(png.result.data, "base64"));
        }
        return { ok: true, value };
      }
    }
    return { ok: false, value };
  } finally {
    // stop the whole group and wait, before removing the profile: Chromium's
    // helper processes write to it until they are gone
    const exited = new Promise((r) => (chrome.exitCode !== null ? r() : chrome.once("exit", r)));
    const signal = (sig) => { try { process.kill(-chrome.pid, sig); } catch { /* already gone */ } };
    signal("SIGTERM");
    await Promise.race([exited, sleep(5000)]);
    signal("SIGKILL");
    await sleep(300);
    rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  }
}
