#!/usr/bin/env sysbench
-- range.lua: short range-scan microbenchmarks (dbbench steps
-- range-{covered,notcovered}-{pk,si}).
--
--   --range-kind=covered-pk     SELECT id    FROM sbtestN WHERE id BETWEEN x AND x+S
--   --range-kind=notcovered-pk  SELECT id, c FROM sbtestN WHERE id BETWEEN x AND x+S
--   --range-kind=covered-si     SELECT k     FROM sbtestN WHERE k  BETWEEN x AND x+S
--   --range-kind=notcovered-si  SELECT k, c  FROM sbtestN WHERE k  BETWEEN x AND x+S
--
-- S is --range-size (the methodology's "x AND x+100"); x is a random id. One
-- statement per event, no BEGIN/COMMIT.

do
   local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
   package.path = dir .. "?.lua;" .. package.path
end
local dbb = require("dbbench_common")

dbb.options{
   range_kind = {"Query shape: covered-pk, notcovered-pk, covered-si, notcovered-si", "covered-pk"},
   range_size = {"Width of the range", 100},
}
dbb.install_commands()

local shapes = {
   ["covered-pk"] = {"id", "id"},
   ["notcovered-pk"] = {"id, c", "id"},
   ["covered-si"] = {"k", "k"},
   ["notcovered-si"] = {"k, c", "k"},
}

local kind, size

function dbb.build(con, t)
   local shape = shapes[kind]
   return {sel = dbb.prepare(con, string.format("SELECT %s FROM sbtest%d WHERE %s BETWEEN ? AND ?",
      shape[1], t, shape[2]), {"int", "int"})}
end

dbb.install_thread_hooks(function()
   kind = dbb.check_choice("range-kind", sysbench.opt.range_kind,
      {"covered-pk", "notcovered-pk", "covered-si", "notcovered-si"})
   size = dbb.positive("range-size", sysbench.opt.range_size)
end)

function event()
   local s = dbb.stmts[dbb.table_num()].sel
   local x = dbb.random_id()
   s.params[1]:set(x)
   s.params[2]:set(x + size)
   s.stmt:execute()
end
