-- E1 peer: coroutine switch rate for Lua 5.1, Lua 5.4 and LuaJIT.
--
-- Usage: lua5.4 peers/lua/e1.lua <resume|transfer> <N>
-- Prints one line: "switches=<int> ns=<int>".
--
-- Lua coroutines are asymmetric (resume/yield only), so only `resume` is
-- supported; `transfer` prints "unsupported" on stderr and exits 3.
--
-- Clock: standard Lua (and LuaJIT) has no monotonic wall clock, so the timed
-- loop is measured with os.clock(), which is the process CPU time. The loop
-- never blocks, so on an idle machine CPU time and wall time agree closely.
-- os.clock() has microsecond resolution at best; use N large enough.

local function usage()
  io.stderr:write("usage: e1.lua <resume|transfer> <N>   (N a positive integer)\n")
  os.exit(2)
end

local variant, nstr = arg[1], arg[2]
if arg[3] ~= nil or nstr == nil or not string.match(nstr, "^%d+$") then usage() end
local N = tonumber(nstr)
if N < 1 then usage() end

if variant == "transfer" then
  io.stderr:write("unsupported\n")
  os.exit(3)
elseif variant ~= "resume" then
  usage()
end

-- Prints a non-negative number as a plain integer (no "1e+06", no ".0"),
-- the same way in Lua 5.1 (doubles only) and 5.4 (integers and floats).
local function int(x)
  return string.format("%d", math.floor(x + 0.5))
end

-- Two coroutines that yield back at once, forever.
local function body()
  while true do coroutine.yield() end
end
local c1 = coroutine.create(body)
local c2 = coroutine.create(body)

local resume = coroutine.resume
local t0 = os.clock()
for _ = 1, N do
  resume(c1) -- main -> c1, c1 -> main
  resume(c2) -- main -> c2, c2 -> main
end
local t1 = os.clock()

-- 4 switches per iteration: main->c1, c1->main, main->c2, c2->main.
io.write("switches=", int(4 * N), " ns=", int((t1 - t0) * 1e9), "\n")
