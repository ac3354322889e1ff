-- Exercises wrk's lifecycle hooks: setup runs once per thread in the main
-- state, init(args) in each thread, response() per reply, done() at the end.
local counter = 0
local threads = {}

function setup(thread)
  counter = counter + 1
  thread:set("thread_no", counter)
  table.insert(threads, thread)
end

function init(args)
  wrk.headers["X-Thread"] = tostring(thread_no)
  wrk.headers["X-Arg"] = args[1] or "none"
  wrk.method = "PUT"
  wrk.body = "payload"
  responses = 0
end

function response(status, headers, body)
  if status == 200 and body == "pong" then
    responses = responses + 1
  end
end

function done(summary, latency, requests)
  local seen = 0
  for _, t in ipairs(threads) do
    seen = seen + t:get("responses")
  end
  local f = assert(io.open(os.getenv("DONE_FILE"), "w"))
  f:write(string.format("%d %d %d %d\n", summary.requests, seen,
    latency:percentile(50) > 0 and 1 or 0, latency.max >= latency.min and 1 or 0))
  f:close()
end
