"""Checks the trace trace_passes_test writes with SLINKY_TRACE set: a JSON array (parsed with
json, a real parser) of duration events whose begin/end pairs nest on each thread; one
"build_pipeline" event containing an event per lowering pass; evaluations ("pipeline") with loops,
iterations and calls inside them; and events on more than one thread (a parallel loop)."""
import json
import sys

events = json.load(open(sys.argv[1]))
assert isinstance(events, list) and events, "no events"
stacks = {}
children = {}  # name -> set of names of events directly inside it
last_ts = {}
for e in events:
    if e.get("ph") not in ("B", "E"):
        continue
    for key in ("name", "cat", "ph", "pid", "tid", "ts"):
        assert key in e, "event without %s: %r" % (key, e)
    tid = e["tid"]
    assert e["ts"] >= last_ts.get(tid, 0), "time goes back on thread %r: %r" % (tid, e)
    last_ts[tid] = e["ts"]
    stack = stacks.setdefault(tid, [])
    if e["ph"] == "B":
        if stack:
            children.setdefault(stack[-1], set()).add(e["name"])
        stack.append(e["name"])
    else:
        assert stack, "end without begin on thread %r: %r" % (tid, e)
        begun = stack.pop()
        assert begun == e["name"], "%r ends inside %r on thread %r" % (e["name"], begun, tid)
for tid, stack in stacks.items():
    assert not stack, "unfinished events on thread %r: %r" % (tid, stack)

passes = {"check_graph", "schedule_graph", "bounds_inference", "plan_aliases", "emit_program", "simplify",
          "checks", "trace"}
missing = passes - children.get("build_pipeline", set())
assert not missing, "passes not traced inside build_pipeline: %r" % missing
names = {e["name"] for e in events}
for name in ("pipeline", "loop y", "loop y iteration", "a", "b"):
    assert name in names, "no %r event (events: %r)" % (name, sorted(names))
assert "loop y iteration" in children.get("loop y", set()), "iterations not inside their loop"
threads_with_calls = {e["tid"] for e in events if e["name"] in ("a", "b")}
assert len(threads_with_calls) > 1, "calls on one thread only: %r" % threads_with_calls
print("trace ok: %d events on %d threads" % (len(events), len(stacks)))
