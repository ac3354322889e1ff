-- A hotel-reservation request mix written for orchbench's tests, in the
-- style of DeathStarBench's wrk2 hotel script: local socket = require(...),
-- a seed from socket.gettime(), math.random with and without bounds, a
-- local URL prefix that makes every target absolute-form, tostring of
-- floats and of globals nobody defines, wrk.format with an empty header
-- table and a nil body, local functions called with an argument they
-- ignore, and a global cur_time set by request().
local socket = require("socket")
math.randomseed(socket.gettime() * 1000)
math.random(); math.random(); math.random()

local url = "http://localhost:5000"

local function two_digit_day(day)
  local text = tostring(day)
  if day < 10 then
    text = "0" .. text
  end
  return "2015-04-" .. text
end

local function pick_user()
  local n = math.random(0, 500)
  local secret = ""
  for _ = 1, 10 do
    secret = secret .. tostring(n)
  end
  return "Cornell_" .. tostring(n), secret
end

local function point()
  local la = 38.0235 + (math.random(0, 481) - 240.5) / 1000.0
  local lo = -122.095 + (math.random(0, 325) - 157.0) / 1000.0
  return la, lo
end

local function hotels()
  local first = math.random(9, 23)
  local last = math.random(first + 1, 24)
  local la, lo = point()
  local target = url .. "/hotels?inDate=" .. two_digit_day(first) ..
    "&outDate=" .. two_digit_day(last) ..
    "&lat=" .. tostring(la) .. "&lon=" .. tostring(lo)
  local headers = {}
  return wrk.format("GET", target, headers, nil)
end

local function recommendations()
  local pick = math.random()
  local require_what
  if pick < 0.33 then
    require_what = "dis"
  elseif pick < 0.66 then
    require_what = "rate"
  else
    require_what = "price"
  end
  local la, lo = point()
  local target = url .. "/recommendations?require=" .. require_what ..
    "&lat=" .. tostring(la) .. "&lon=" .. tostring(lo)
  local headers = {}
  return wrk.format("GET", target, headers, nil)
end

local function login()
  local name, secret = pick_user()
  local target = url .. "/user?username=" .. name .. "&password=" .. secret
  local headers = {}
  return wrk.format("POST", target, headers, nil)
end

local function reserve()
  local first = math.random(9, 23)
  local last = first + math.random(1, 5)
  local hotel = tostring(math.random(1, 80))
  local name, secret = pick_user()
  -- lat and lon are globals nobody sets: tostring gives "nil".
  local target = url .. "/reservation?inDate=" .. two_digit_day(first) ..
    "&outDate=" .. two_digit_day(last) ..
    "&lat=" .. tostring(lat) .. "&lon=" .. tostring(lon) ..
    "&hotelId=" .. hotel .. "&customerName=" .. name ..
    "&username=" .. name .. "&password=" .. secret .. "&number=1"
  local headers = {}
  return wrk.format("POST", target, headers, nil)
end

request = function()
  cur_time = math.floor(socket.gettime())
  local hotels_share = 0.6
  local recommend_share = 0.39
  local login_share = 0.005

  local coin = math.random()
  if coin < hotels_share then
    return hotels(url)
  elseif coin < hotels_share + recommend_share then
    return recommendations(url)
  elseif coin < hotels_share + recommend_share + login_share then
    return login(url)
  end
  return reserve(url)
end
