#!/usr/bin/env sysbench
-- update.lua: single-statement UPDATE microbenchmarks (dbbench steps
-- update-inlist, update-one, update-zipf).
--
--   --update-kind=inlist  UPDATE sbtestN SET c=? WHERE id IN (--inlist-size random ids)
--   --update-kind=one     UPDATE sbtestN SET c=? WHERE id=1   (one hot row)
--   --update-kind=zipf    UPDATE sbtestN SET c=? WHERE id=?   (zipfian ids, --zipf-exp)
--
-- One statement per event, in autocommit mode. The zipfian generator is our
-- own (sysbench 1.0.20 has no zipfian --rand-type): rank 1 is id 1, the
-- hottest row; see dbbench_common.lua.

do -- find dbbench_common.lua next to this file
   local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
   package.path = dir .. "?.lua;" .. package.path
end
local dbb = require("dbbench_common")

dbb.options{
   update_kind = {"What to update: inlist, one or zipf", "inlist"},
   inlist_size = {"Number of ids in the IN-list (--update-kind=inlist)", 10},
   zipf_exp = {"Exponent of the zipfian distribution (--update-kind=zipf)", 0.8},
}
dbb.install_commands()

local kind, size, zipf

function dbb.build(con, t)
   if kind == "inlist" then
      local types = {{"char", 120}}
      for i = 1, size do types[i + 1] = "int" end
      return {upd = dbb.prepare(con, string.format(
         "UPDATE sbtest%d SET c=? WHERE id IN (%s)", t, dbb.placeholders(size)), types)}
   end
   return {upd = dbb.prepare(con, string.format(
      "UPDATE sbtest%d SET c=? WHERE id=?", t), {{"char", 120}, "int"})}
end

dbb.install_thread_hooks(function()
   kind = dbb.check_choice("update-kind", sysbench.opt.update_kind, {"inlist", "one", "zipf"})
   size = dbb.positive("inlist-size", sysbench.opt.inlist_size)
   if kind == "zipf" then
      local s = tonumber(sysbench.opt.zipf_exp)
      if s == nil or s <= 0 then error("--zipf-exp must be a number > 0", 0) end
      zipf = dbb.zipf(sysbench.opt.table_size, s)
   end
end)

local ids = {}

function event()
   local s = dbb.stmts[dbb.table_num()].upd
   local p = s.params
   p[1]:set(dbb.c_value())
   if kind == "inlist" then
      dbb.distinct_ids(size, ids)
      for i = 1, size do p[i + 1]:set(ids[i]) end
   elseif kind == "one" then
      p[2]:set(1)
   else
      p[2]:set(zipf())
   end
   s.stmt:execute()
end
