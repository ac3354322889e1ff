-- A media-microservices review composer written for orchbench's tests, in
-- the style of DeathStarBench's wrk2 compose-review.lua: a seed from
-- os.time, a local title list drawn with math.random(n), a recursive
-- string.random over a character table, a form body whose title is escaped
-- by a global urlEncode defined after request(), and a target built from
-- the global url that wrk2 sets to the URL on the command line (given the
-- compose route, the route appears twice in the request line).
math.randomseed(os.time())
math.random(); math.random(); math.random()

local chars = {}
for c in ("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"):gmatch(".") do
  chars[#chars + 1] = c
end

local titles = {
  "Avengers: Endgame",
  "Pokémon Detective Pikachu",
  "The Lion King 1½",
  "Harry Potter and the Philosopher's Stone",
  "Miss & Mrs. Cops",
  "Fate/stay night: Heaven’s Feel II. lost butterfly",
  "WALL·E",
  "Flood",
}

function string.random(n)
  if n <= 0 then
    return ""
  end
  return string.random(n - 1) .. chars[math.random(1, #chars)]
end

request = function()
  local user = math.random(1000)
  local title = urlEncode(titles[math.random(#titles)])
  local rating = math.random(0, 10)
  local headers = {}
  headers["Content-Type"] = "application/x-www-form-urlencoded"
  local body = "username=username_" .. tostring(user) .. "&password=password_" .. tostring(user) ..
    "&title=" .. title .. "&rating=" .. rating .. "&text=" .. string.random(256)
  return wrk.format("POST", url .. "/wrk2-api/review/compose", headers, body)
end

-- Letters, digits, '.', '-' and space stay; space becomes '+'; every other
-- byte, each byte of a multi-byte character included, becomes %XX.
function urlEncode(text)
  local escaped = text:gsub("[^%w%.%- ]", function(c)
    return string.format("%%%02X", string.byte(c))
  end)
  return escaped:gsub(" ", "+")
end
