-- Builds a form body the way DeathStarBench's compose script does, with a
-- helper that recurses once per character, and posts it to an
-- absolute-form target without encoding it. Written for orchbench's tests.
require "socket"
math.randomseed(socket.gettime() * 1000)

local alphabet = {"k", "L", "7", "z", "Q"}

local function chars(n)
  if n <= 0 then
    return ""
  end
  return alphabet[math.random(#alphabet)] .. chars(n - 1)
end

request = function()
  local text = chars(256) .. " @user_7 http://" .. chars(64)
  local body = "name=user_7&text=" .. text .. "&note=" .. chars(1200) ..
    "&ids=[\"1\",\"2\"]&kind=0"
  local headers = {}
  headers["Content-Type"] = "application/x-www-form-urlencoded"
  return wrk.format("POST", "http://localhost:8080/wrk2-api/post/compose", headers, body)
end
