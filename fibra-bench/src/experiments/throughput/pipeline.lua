-- Pipelining for wrk, as TechEmpower's plaintext test runs it: each write
-- on a connection is DEPTH requests (the script's argument, default 1), and
-- wrk sends the next batch once every response of this one is in.
--
--   wrk -t2 -c100 -d5s --latency -s pipeline.lua http://127.0.0.1:8080/hello -- 16

local batch

init = function(args)
   local depth = tonumber(args[1]) or 1
   local requests = {}
   for i = 1, depth do
      requests[i] = wrk.format()
   end
   batch = table.concat(requests)
end

request = function()
   return batch
end
