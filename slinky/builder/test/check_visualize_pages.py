#!/usr/bin/env python3
"""Loads visualize's pages in headless Chromium and checks what they show.

Usage: check_visualize_pages.py DIR NAME...

DIR holds NAME.html (a page written by slinky::visualize) and NAME.json ({"calls": the number
of calls and copies a real run of the pipeline made, "outputs": {memory name: elements}}), as
visualize_pages_test writes them. One headless Chromium is driven over the DevTools protocol
(--remote-debugging-pipe: no port, no network). For each page it asserts: no exception, no
console or browser error, no request other than the page's own file; on the first two pages,
play from the last step starts over and moves the slider, and pause stops it; with the slider
swept forward (every step, or about 200 of them on long pages), the calls the page says it
replayed are the calls and copies among the steps so far; after a move back and to the end,
the page, its status line and the real run agree on the number of calls, and every element of
each output is drawn as holding data; no draw takes more than MAX_DRAW_MS. Exits 77 (a CTest
skip) when no Chromium is installed; set SLINKY_CHROMIUM to choose the binary.
"""

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
MAX_DRAW_MS = 2000  # a draw slower than this is a frozen page
TIMEOUT_S = 30

# Runs in the page after its load: plays a little, sweeps the slider, reads the canvases.
PAGE_TEST = r"""
(async () => {
  const res = {errors: []};
  const slider = document.getElementById("slider"), play = document.getElementById("play");
  const status = document.getElementById("status");
  const n = data.steps.length;
  res.steps = n;
  res.pageCalls = data.calls;
  res.failure = document.getElementById("failure") ? document.getElementById("failure").textContent : null;
  const nav = performance.getEntriesByType("navigation")[0];
  res.loadMs = nav ? nav.loadEventEnd - nav.startTime : -1;
  const move = p => {
    const t = performance.now();
    slider.value = p;
    slider.dispatchEvent(new Event("input"));
    res.maxDrawMs = Math.max(res.maxDrawMs || 0, performance.now() - t);
    return Number(document.body.dataset.replayedCalls);
  };
  // Play from the last step (it starts over) for a moment, then pause (unless it reached the end
  // and stopped); then the slider must stay.
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  if (TEST_PLAY) {
    move(Math.max(0, n - 1));
    play.click();
    await sleep(300);
    res.playedTo = Number(slider.value);
    if (play.textContent == "pause") play.click();
    const stoppedAt = Number(slider.value);
    await sleep(120);
    if (play.textContent != "play" || Number(slider.value) != stoppedAt) {
      res.errors.push("play did not stop: the button says " + play.textContent + ", the slider moved from " +
                      stoppedAt + " to " + slider.value);
    }
  }
  // Forward sweep: the replayed calls are the calls and copies among the steps so far.
  const stride = Math.max(1, Math.floor(n / 200));
  let expected = 0, last = 0;
  for (let p = 0; p < n; ++p) {
    if (data.steps[p].k == "call" || data.steps[p].k == "copy") ++expected;
    if (p % stride && p != n - 1) continue;
    const r = move(p);
    if (r != expected || r < last) {
      res.errors.push("at step " + (p + 1) + " the page says it replayed " + r + " calls, expected " + expected);
      break;
    }
    last = r;
  }
  // Back to the middle (the replay starts over), then the end.
  move(Math.floor(n / 2));
  res.replayed = move(Math.max(0, n - 1));
  res.status = status.textContent;
  // What the canvases show at the last step: elements holding data (green) or written by this
  // step (red); padding between planes is transparent.
  const canvases = document.querySelectorAll("#memories canvas");
  res.memories = {};
  data.memories.forEach((m, i) => {
    const c = canvases[i];
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let written = 0;
    for (let p = 0; p < px.length; p += 4) {
      const rgb = px[p] + "," + px[p + 1] + "," + px[p + 2];
      if (rgb == "120,190,120" || rgb == "220,40,40") ++written;
    }
    res.memories[m.name] = {size: m.size, written: written};
  });
  return res;
})()
"""


def find_chromium():
    if os.environ.get("SLINKY_CHROMIUM"):
        return os.environ["SLINKY_CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (fd 3: commands in, fd 4: out)."""

    def __init__(self, exe, log):
        self.profile = tempfile.mkdtemp(prefix="slinky_chromium_")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                "--user-data-dir=" + self.profile, "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--mute-audio",
                # Shared memory in /tmp: containers often have a small /dev/shm.
                "--disable-dev-shm-usage", "about:blank"]
        # The shell puts the pipe's ends on fds 3 and 4, where Chromium expects them.
        self.proc = subprocess.Popen(
            ["sh", "-c", 'exec "$@" 3<&%d 4>&%d' % (to_browser_r, from_browser_w), "sh"] + args,
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed its pipe (exit status %s)" % self.proc.poll())
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=TIMEOUT_S):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, session, timeout=TIMEOUT_S):
        deadline = time.monotonic() + timeout
        for m in self.events:
            if m.get("method") == method and m.get("sessionId") == session:
                return m
        while True:
            m = self._read(deadline)
            self.events.append(m)
            if m.get("method") == method and m.get("sessionId") == session:
                return m


def open_tab(browser):
    """A tab with the domains whose events check_page reads enabled; returns its session."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(domain + ".enable", session=session)
    return session


def check_page(browser, session, path, expect, test_play):
    """Returns (problems, summary) for one page, loaded in the tab of session."""
    problems = []
    url = "file://" + os.path.abspath(path)
    browser.events = []
    browser.send("Page.navigate", {"url": url}, session=session)
    browser.wait_event("Page.loadEventFired", session)
    test = PAGE_TEST.replace("TEST_PLAY", "true" if test_play else "false")
    result = browser.send("Runtime.evaluate", {"expression": test, "awaitPromise": True, "returnByValue": True},
                          session=session)
    # Let late console messages and requests arrive.
    browser.send("Runtime.evaluate", {"expression": "0"}, session=session)
    for m in browser.events:
        if m.get("sessionId") != session:
            continue
        method, params = m.get("method"), m.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            problems.append("script error: %s %s"
                            % (d.get("text", ""), d.get("exception", {}).get("description", "")))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append("console %s: %s" % (params["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", []))))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            problems.append("browser error: %s" % params["entry"].get("text"))
        elif method == "Network.requestWillBeSent" and params["request"]["url"].split("#")[0] != url:
            problems.append("network request: %s" % params["request"]["url"])

    if "exceptionDetails" in result:
        d = result["exceptionDetails"]
        problems.append("the test script failed: %s %s"
                        % (d.get("text", ""), d.get("exception", {}).get("description", "")))
        return problems, ""
    r = result["result"]["value"]
    problems += r["errors"]
    if r["failure"]:
        problems.append("the page shows a failure: " + r["failure"])
    if r["pageCalls"] != expect["calls"]:
        problems.append("the page recorded %d calls, the real run made %d" % (r["pageCalls"], expect["calls"]))
    if r["replayed"] != expect["calls"]:
        problems.append("at the last step the page says it replayed %d calls, the real run made %d"
                        % (r["replayed"], expect["calls"]))
    status = "step %d of %d, call %d of %d" % (r["steps"], r["steps"], r["replayed"], r["pageCalls"])
    if not r["status"].startswith(status):
        problems.append("status line at the end: " + r["status"])
    if test_play and r["steps"] > 1 and not 1 <= r["playedTo"] <= r["steps"] - 1:
        problems.append("play from the last step: the slider went to %d" % r["playedTo"])
    for name, elements in expect["outputs"].items():
        m = r["memories"].get(name)
        if not m:
            problems.append("no memory named %s on the page" % name)
        elif m["written"] != elements:
            problems.append("output %s: %d of its %d elements drawn as holding data (memory of %d)"
                            % (name, m["written"], elements, m["size"]))
    if r["maxDrawMs"] > MAX_DRAW_MS:
        problems.append("a draw took %.0f ms" % r["maxDrawMs"])
    summary = (("played, then " if test_play else "")
               + "%d steps, %d memories, replayed %d calls (real run: %d), outputs drawn holding data, "
               "load %.0f ms, slowest draw %.1f ms"
               % (r["steps"], len(r["memories"]), r["replayed"], expect["calls"], r["loadMs"], r["maxDrawMs"]))
    return problems, summary


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    directory, names = sys.argv[1], sys.argv[2:]
    exe = find_chromium()
    if not exe:
        print("SKIPPED: no Chromium found (tools/setup.sh installs the Debian package chromium with "
              "apt-get; or set SLINKY_CHROMIUM to a Chromium or Chrome binary)")
        return SKIP
    start = time.monotonic()
    log_path = os.path.join(directory, "chromium.log")
    failed = False
    with open(log_path, "w") as log:
        browser = Browser(exe, log)
        try:
            version = browser.send("Browser.getVersion")["product"]
            print("%s (%s)" % (version, exe))
            session = open_tab(browser)
            for name in names:
                with open(os.path.join(directory, name + ".json")) as f:
                    expect = json.load(f)
                # Play takes 0.4 s of waiting: it is tried on the first two pages only.
                problems, summary = check_page(browser, session, os.path.join(directory, name + ".html"), expect,
                                               name in names[:2])
                if problems:
                    failed = True
                    print("FAIL %s:" % name)
                    for p in problems:
                        print("  " + p)
                else:
                    print("ok   %s: %s" % (name, summary))
        finally:
            browser.close()
    print("%d pages in %.1f s%s" % (len(names), time.monotonic() - start,
                                    "" if not failed else "; Chromium's log: " + log_path))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
