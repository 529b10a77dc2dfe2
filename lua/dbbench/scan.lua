#!/usr/bin/env sysbench
-- scan.lua: full table scan (dbbench step scan).
--
--   SELECT * FROM sbtestN WHERE LENGTH(c) < 0
--
-- The predicate is never true, so no row travels to the client, but the
-- server reads and evaluates every row: the step measures the server's scan
-- speed. One scan per event; with several tables each event scans a random one.
--
-- sysbench reports scans (queries) per second. The figure users compare is
-- rows per second = scans/s x rows per table. The dbbench agent counts the
-- rows (SELECT COUNT(*)) right before the step and reports rows/s; when you run
-- the script by hand, --scan-report=on prints the row count it saw at start so
-- you can multiply yourself.

do
   local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
   package.path = dir .. "?.lua;" .. package.path
end
local dbb = require("dbbench_common")

dbb.options{
   scan_report = {"Print the number of rows per table at start (thread 0)", false},
}
dbb.install_commands()

function dbb.build(con, t)
   return {scan = dbb.prepare(con, string.format("SELECT * FROM sbtest%d WHERE LENGTH(c) < 0", t))}
end

dbb.install_thread_hooks(nil, function()
   if sysbench.opt.scan_report and sysbench.tid == 0 then
      local total = 0
      for t = 1, sysbench.opt.tables do
         total = total + tonumber(dbb.con:query_row("SELECT COUNT(*) FROM sbtest" .. t))
      end
      print(string.format("dbbench scan: %.0f rows per table", total / sysbench.opt.tables))
   end
end)

function event()
   dbb.stmts[dbb.table_num()].scan.stmt:execute()
end
