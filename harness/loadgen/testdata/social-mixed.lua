-- A social-network request mix in the style of DeathStarBench's wrk2
-- scripts: it relies on require "socket", socket.gettime, os.getenv,
-- math.random, string.format, wrk.format with absolute-form paths and a
-- global request function. Written for orchbench's tests.
local socket = require "socket"
local time = socket.gettime() * 1000
math.randomseed(time)
math.random(); math.random(); math.random()

local max_user_index = tonumber(os.getenv("max_user_index")) or 962
local base = "http://localhost:8080/wrk2-api"

local letters = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}

local function random_text(n)
  local parts = {}
  for i = 1, n do
    parts[i] = letters[math.random(1, #letters)]
  end
  return table.concat(parts)
end

local function compose_post()
  local user_index = math.random(0, max_user_index - 1)
  local headers = {}
  headers["Content-Type"] = "application/x-www-form-urlencoded"
  local body = string.format("username=username_%d&user_id=%d&text=%s&media_ids=[]&post_type=0",
    user_index, user_index, random_text(16))
  return wrk.format("POST", base .. "/post/compose", headers, body)
end

local function read_home_timeline()
  local user_id = tostring(math.random(0, max_user_index - 1))
  local start = tostring(math.random(0, 100))
  local stop = tostring(start + 10)
  local path = base .. "/home-timeline/read?user_id=" .. user_id .. "&start=" .. start .. "&stop=" .. stop
  return wrk.format("GET", path, {}, nil)
end

local function read_user_timeline()
  local user_id = tostring(math.random(0, max_user_index - 1))
  local path = string.format("%s/user-timeline/read?user_id=%s&start=0&stop=10", base, user_id)
  return wrk.format("GET", path, {}, nil)
end

request = function()
  cur_time = math.floor(socket.gettime())
  local coin = math.random()
  if coin < 0.6 then
    return read_home_timeline()
  elseif coin < 0.9 then
    return read_user_timeline()
  else
    return compose_post()
  end
end
