#!/usr/bin/env sysbench
-- read_only.lua: read-only transactions with one kind of range query
-- (dbbench steps read-only-simple, -sum, -order, -distinct, -count).
--
-- Per event: BEGIN; --point-selects x SELECT c FROM sbtestN WHERE id=?; one
-- range query over --range-size ids; COMMIT. With --no-trx the event is the
-- range query alone, in autocommit mode (read-only-count).
--
--   --query=simple    SELECT c FROM sbtestN WHERE id BETWEEN ? AND ?
--   --query=sum       SELECT SUM(k) FROM sbtestN WHERE id BETWEEN ? AND ?
--   --query=order     SELECT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c
--   --query=distinct  SELECT DISTINCT c FROM sbtestN WHERE id BETWEEN ? AND ? ORDER BY c
--   --query=count     SELECT count(c) FROM sbtestN WHERE id BETWEEN ? AND ?

do
   local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
   package.path = dir .. "?.lua;" .. package.path
end
local dbb = require("dbbench_common")

dbb.options{
   query = {"Range query: simple, sum, order, distinct or count", "simple"},
   range_size = {"Number of ids in the range", 1000},
   point_selects = {"Point selects per transaction (ignored with --no-trx)", 10},
   no_trx = {"Run only the range query, without BEGIN/COMMIT and point selects", false},
}
dbb.install_commands()

local queries = {
   simple = "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?",
   sum = "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?",
   order = "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
   distinct = "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
   count = "SELECT count(c) FROM sbtest%d WHERE id BETWEEN ? AND ?",
}

local query, size, points, no_trx

function dbb.build(con, t)
   local set = {range = dbb.prepare(con, string.format(queries[query], t), {"int", "int"})}
   if not no_trx then
      set.point = dbb.prepare(con, string.format("SELECT c FROM sbtest%d WHERE id=?", t), {"int"})
   end
   return set
end

function dbb.build_trx(con)
   if no_trx then return {} end
   return {begin = dbb.prepare(con, "BEGIN"), commit = dbb.prepare(con, "COMMIT")}
end

dbb.install_thread_hooks(function()
   query = dbb.check_choice("query", sysbench.opt.query, {"simple", "sum", "order", "distinct", "count"})
   size = dbb.positive("range-size", sysbench.opt.range_size)
   points = tonumber(sysbench.opt.point_selects) or 10
   no_trx = sysbench.opt.no_trx
end)

function event()
   local set = dbb.stmts[dbb.table_num()]
   if not no_trx then
      dbb.trx.begin.stmt:execute()
      dbb.in_trx = true
      local p = set.point
      for _ = 1, points do
         p.params[1]:set(dbb.random_id())
         p.stmt:execute()
      end
   end
   local r = set.range
   local x = dbb.random_id()
   r.params[1]:set(x)
   r.params[2]:set(x + size - 1)
   r.stmt:execute()
   if not no_trx then
      dbb.trx.commit.stmt:execute()
      dbb.in_trx = false
   end
end
