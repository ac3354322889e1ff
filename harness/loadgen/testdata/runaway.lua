-- Recurses without end from request(): the run must fail and say where.
-- Written for orchbench's tests.
local function down(n)
  return 1 + down(n + 1)
end

request = function()
  down(1)
  return wrk.format("GET", "/")
end
