-- park-scale peer: N coroutines, each resumed once and suspended, all alive
-- at once; for Lua 5.4 and LuaJIT (and Lua 5.1).
--
-- Usage: lua5.4 peers/lua/park.lua <N> <LIMIT_S>
-- Creates N coroutines (coroutine.create of a function that yields at once)
-- and resumes each once, so that it stays suspended in its yield; they are
-- kept in a table. Creating stops early if it takes more than LIMIT_S
-- seconds, or where Lua runs out of memory (the reason is then printed on
-- stderr). Prints one line: "n=<N> created=<int> ns=<int> rss_before_kb=<int>
-- rss_kb=<int>": the time from the first coroutine.create until the last
-- coroutine is suspended, VmRSS before the first one and VmRSS with all of
-- them suspended, from /proc/self/status.
--
-- Clock: standard Lua has no monotonic wall clock, so the time is the process
-- CPU time from os.clock() (as in e1.lua); creating never blocks, so on an
-- idle machine CPU time and wall time agree closely.

local function usage()
  io.stderr:write("usage: park.lua <N> <LIMIT_S>   (N >= 1, plain decimal integers)\n")
  os.exit(2)
end

local nstr, limitstr = arg[1], arg[2]
if arg[3] ~= nil or limitstr == nil
  or not string.match(nstr, "^%d+$") or not string.match(limitstr, "^%d+$") then
  usage()
end
local n, limit = tonumber(nstr), tonumber(limitstr)
if n < 1 then usage() end

-- A "kB" field of /proc/self/status, e.g. VmRSS.
local function status_kb(key)
  local file = assert(io.open("/proc/self/status"))
  local status = file:read("*a")
  file:close()
  return tonumber(string.match(status, key .. ":%s*(%d+) kB"))
end

-- Prints a non-negative number as a plain integer (no "1e+06", no ".0"),
-- the same way in Lua 5.1 (doubles only) and 5.4 (integers and floats).
local function int(x)
  return string.format("%d", math.floor(x + 0.5))
end

local function body()
  coroutine.yield()
end

local create, resume = coroutine.create, coroutine.resume
local coroutines = {}
local created = 0
local stopped = nil
local before = status_kb("VmRSS")
local t0 = os.clock()
local ok, err = pcall(function()
  for i = 0, n - 1 do
    if i % 1024 == 0 and os.clock() - t0 > limit then
      stopped = "the time limit of " .. limit .. " s"
      return
    end
    local co = create(body)
    resume(co)
    coroutines[i + 1] = co
    created = i + 1
  end
end)
local t1 = os.clock()
if not ok then stopped = tostring(err) end
local rss = status_kb("VmRSS")
if stopped then io.stderr:write(stopped, "\n") end
io.write("n=", int(n), " created=", int(created), " ns=", int((t1 - t0) * 1e9),
  " rss_before_kb=", int(before), " rss_kb=", int(rss), "\n")
