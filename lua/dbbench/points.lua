#!/usr/bin/env sysbench
-- points.lua: IN-list point-query microbenchmarks (dbbench steps
-- random-points_range=N, hot-points, points-{covered,notcovered}-{pk,si}).
--
--   --points=random         SELECT c     FROM sbtestN WHERE id IN (N random ids)
--   --points=hot            SELECT c     FROM sbtestN WHERE id IN (N fixed ids mid-table)
--   --points=covered-pk     SELECT id    FROM sbtestN WHERE id IN (N random ids)
--   --points=notcovered-pk  SELECT id, c FROM sbtestN WHERE id IN (N random ids)
--   --points=covered-si     SELECT k     FROM sbtestN WHERE k  IN (N random values)
--   --points=notcovered-si  SELECT k, c  FROM sbtestN WHERE k  IN (N random values)
--
-- N is --inlist-size. One statement per event, no BEGIN/COMMIT. "Covered"
-- queries can be answered from the index alone; "not covered" ones must also
-- read the row (c is not in the k index).

do
   local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
   package.path = dir .. "?.lua;" .. package.path
end
local dbb = require("dbbench_common")

dbb.options{
   points = {"Query shape: random, hot, covered-pk, notcovered-pk, covered-si, notcovered-si", "random"},
   inlist_size = {"Number of values in the IN-list", 10},
}
dbb.install_commands()

local shapes = {
   ["random"] = {"c", "id"},
   ["hot"] = {"c", "id"},
   ["covered-pk"] = {"id", "id"},
   ["notcovered-pk"] = {"id, c", "id"},
   ["covered-si"] = {"k", "k"},
   ["notcovered-si"] = {"k, c", "k"},
}

local kind, size

-- hot_ids are the same N ids for every event: the middle of the table.
local function hot_ids(n)
   local rows = sysbench.opt.table_size
   local first = math.floor(rows / 2) - math.floor(n / 2) + 1
   if first < 1 then first = 1 end
   local ids = {}
   for i = 1, n do ids[i] = ((first + i - 2) % rows) + 1 end
   return ids
end

function dbb.build(con, t)
   local shape = shapes[kind]
   local s = dbb.prepare(con, string.format("SELECT %s FROM sbtest%d WHERE %s IN (%s)",
      shape[1], t, shape[2], dbb.placeholders(size)), dbb.ints(size))
   if kind == "hot" then
      for i, id in ipairs(hot_ids(size)) do s.params[i]:set(id) end
   end
   return {sel = s}
end

dbb.install_thread_hooks(function()
   kind = dbb.check_choice("points", sysbench.opt.points,
      {"random", "hot", "covered-pk", "notcovered-pk", "covered-si", "notcovered-si"})
   size = dbb.positive("inlist-size", sysbench.opt.inlist_size)
end)

local random_id = dbb.random_id

function event()
   local s = dbb.stmts[dbb.table_num()].sel
   if kind ~= "hot" then
      local p = s.params
      for i = 1, size do p[i]:set(random_id()) end
   end
   s.stmt:execute()
end
