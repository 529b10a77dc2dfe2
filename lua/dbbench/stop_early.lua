-- dbbench: run another sysbench script, and end it early when asked.
--
-- A step of adaptive duration (docs/agent.md, "Adaptive step duration")
-- runs as `sysbench <this file> <the step's options> --time=<maximum> run`
-- with two environment variables:
--
--   DBBENCH_STEP_SCRIPT  the step's script: a path, or a name sysbench
--                        finds in its own directory (oltp_read_only)
--   DBBENCH_STOP_FILE    a path that does not exist when the run starts
--
-- This file loads the step's script in place (same globals, options and
-- hooks), then wraps its event(): once the stop file exists, event()
-- returns true, which ends the thread's event loop (sysbench's
-- thread_run: "Stop the benchmark if event() returns a value other than
-- nil or false"). When every thread has ended, sysbench prints its final
-- report and histogram as at the end of --time, so a step stopped early
-- keeps them. A signal would not: sysbench 1.0.20 dies on SIGINT or
-- SIGTERM without a final report.
--
-- Each thread looks for the file when os.time() has moved to a new second
-- since it last looked: one failed open() per thread per second, and the
-- threads end within about a second of the file's creation (plus the
-- event under way).

local script = os.getenv("DBBENCH_STEP_SCRIPT")
local stop_file = os.getenv("DBBENCH_STOP_FILE")
if script == nil or script == "" then
   error("stop_early.lua: DBBENCH_STEP_SCRIPT is not set")
end
local path = script
if not script:find("/", 1, true) then
   path = package.searchpath(script, package.path)
   if path == nil then
      error("stop_early.lua: script " .. script .. " not found in " .. package.path)
   end
end
dofile(path)

if stop_file ~= nil and stop_file ~= "" and type(event) == "function" then
   local inner = event
   local checked = 0
   local stopped = false
   function event(...)
      if not stopped then
         local now = os.time()
         if now ~= checked then
            checked = now
            local f = io.open(stop_file, "r")
            if f ~= nil then
               f:close()
               stopped = true
            end
         end
      end
      if stopped then
         return true
      end
      return inner(...)
   end
end
