-- E2 peer: the system calls behind a context switch, with Lua coroutines
-- (Lua 5.4; the script also runs on Lua 5.1 and LuaJIT).
--
-- Usage: lua5.4 peers/lua/e2.lua <N>
-- Prints one line: "switches=<int>".
-- Count the system calls with:  strace -f -c lua5.4 peers/lua/e2.lua <N>
--
-- Lua coroutines are asymmetric (resume/yield only), so main resumes the two
-- in turn: each pushes one element onto its own array and pops it again, then
-- yields back to main, N times; one more resume each runs it to its end.
-- Every resume is 2 switches (main -> coroutine, coroutine -> main), so
-- switches = 2 * 2 * (N + 1). Main then checks that both finished ("joined")
-- with empty arrays.
--
-- A resume is a C call into the interpreter loop behind a setjmp, and a
-- yield or an error unwinds to it; Debian builds Lua for POSIX, where that is
-- _setjmp/_longjmp, which leave the signal mask alone (the seed's fix).

local function usage()
  io.stderr:write("usage: e2.lua <N>   (N a positive integer)\n")
  os.exit(2)
end

local nstr = arg[1]
if arg[2] ~= nil or nstr == nil or not string.match(nstr, "^%d+$") then usage() end
local N = tonumber(nstr)
if N < 1 then usage() end

local arrays = { {}, {} }
local function body(array)
  return function()
    for i = 1, N do
      array[#array + 1] = i -- push
      local top = array[#array]
      array[#array] = nil   -- pop
      if top ~= i then error("popped the wrong element") end
      coroutine.yield()
    end
  end
end
local coroutines = { coroutine.create(body(arrays[1])), coroutine.create(body(arrays[2])) }

local switches = 0
local resume, status = coroutine.resume, coroutine.status
-- Both coroutines end in the same round, after their N-th yield.
for _ = 1, N + 1 do
  for _, c in ipairs(coroutines) do
    local ok, err = resume(c)
    if not ok then error(err) end
    switches = switches + 2
  end
end

-- "Join": both coroutines ran to their end and left their arrays empty.
for k = 1, 2 do
  if status(coroutines[k]) ~= "dead" or #arrays[k] ~= 0 then
    io.stderr:write("coroutines did not finish cleanly\n")
    os.exit(1)
  end
end
io.write(string.format("switches=%d\n", switches))
