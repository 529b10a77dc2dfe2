-- dbbench_common.lua: shared helpers for dbbench's sysbench scripts.
--
-- The microbenchmark scripts (update, points, range, read_only, scan) work on
-- the table layout that sysbench's stock oltp_common.lua builds:
--
--   sbtestN(id INTEGER auto-increment PRIMARY KEY, k INTEGER, c CHAR(120),
--           pad CHAR(60)) with a secondary index k_N on k
--
-- so `sysbench oltp_read_only prepare` (what the dbbench agent runs) loads the
-- data, and any of these scripts can run on it. Each script also has its own
-- `prepare` and `cleanup` commands for people who run it by hand.
--
-- Works with sysbench 1.0.20 (Debian) and 1.1, with the mysql and pgsql
-- drivers. Statements are always created with con:prepare(): with
-- --db-ps-mode=auto (the default) they are server-side prepared statements,
-- with --db-ps-mode=disable sysbench emulates them on the client.

local M = {}

local sql_type = sysbench.sql.type

-- Options every script takes; scripts add their own with M.options{...}.
local common_options = {
   tables = {"Number of tables (sbtest1..sbtestN)", 1},
   table_size = {"Number of rows per table", 10000},
   mysql_storage_engine = {"Storage engine for prepare, if MySQL/MariaDB is used", "innodb"},
}

-- options installs the common options plus the script's own.
function M.options(extra)
   local opts = {}
   for k, v in pairs(common_options) do opts[k] = v end
   for k, v in pairs(extra or {}) do opts[k] = v end
   sysbench.cmdline.options = opts
end

-- Random digit groups, the same shape as the stock scripts' c and pad values.
M.c_template = string.rep("###########-", 9) .. "###########"  -- 119 chars
M.pad_template = string.rep("###########-", 4) .. "###########" -- 59 chars

function M.c_value() return sysbench.rand.string(M.c_template) end

function M.table_num()
   return sysbench.rand.uniform(1, sysbench.opt.tables)
end

-- random_id draws a row id with the distribution chosen by --rand-type (the
-- dbbench agent always passes --rand-type=uniform).
function M.random_id()
   return sysbench.rand.default(1, sysbench.opt.table_size)
end

-- ids returns n distinct random ids, sorted ascending. Sorting keeps row locks
-- of IN-list updates in one order, which avoids most deadlocks between threads;
-- distinct ids keep the IN-list the requested size.
function M.distinct_ids(n, buf)
   local size = sysbench.opt.table_size
   buf = buf or {}
   for i = #buf, 1, -1 do buf[i] = nil end
   if n >= size then
      for i = 1, n do buf[i] = ((i - 1) % size) + 1 end
      return buf
   end
   local seen = {}
   local i = 0
   while i < n do
      local id = M.random_id()
      if not seen[id] then
         seen[id] = true
         i = i + 1
         buf[i] = id
      end
   end
   table.sort(buf)
   return buf
end

-- placeholders returns "?, ?, ..., ?" with n markers.
function M.placeholders(n)
   assert(n >= 1, "an IN-list needs at least one value")
   return string.rep("?, ", n - 1) .. "?"
end

-- Statement wraps a prepared statement and its bound parameters.
-- types is a list of "int" or {"char", maxlen}.
function M.prepare(con, sql, types)
   local stmt = con:prepare(sql)
   local params = {}
   for i, t in ipairs(types or {}) do
      if type(t) == "table" then
         params[i] = stmt:bind_create(sql_type.VARCHAR, t[2])
      else
         params[i] = stmt:bind_create(sql_type.INT)
      end
   end
   if #params > 0 then
      stmt:bind_param(unpack(params))
   end
   return {stmt = stmt, params = params, sql = sql}
end

-- ints n returns a list of n "int" parameter types.
function M.ints(n)
   local t = {}
   for i = 1, n do t[i] = "int" end
   return t
end

-- Per-thread connection and statements. Scripts set M.build(con, tnum) to a
-- function that returns the table of prepared statements for table tnum.
M.build = nil

function M.connect()
   M.drv = sysbench.sql.driver()
   M.con = M.drv:connect()
   M.prepare_all()
end

function M.prepare_all()
   M.stmts = {}
   for t = 1, sysbench.opt.tables do
      M.stmts[t] = M.build(M.con, t)
   end
   if M.build_trx then
      M.trx = M.build_trx(M.con)
   end
end

function M.close_all()
   if M.stmts then
      for _, set in ipairs(M.stmts) do
         for _, s in pairs(set) do s.stmt:close() end
      end
   end
   if M.trx then
      for _, s in pairs(M.trx) do s.stmt:close() end
   end
   M.stmts, M.trx = nil, nil
end

function M.disconnect()
   M.close_all()
   M.con:disconnect()
end

-- Errors that mean the connection was lost and re-established: statements
-- must be prepared again (MySQL client error numbers).
local reconnect_errnos = {[2006] = true, [2011] = true, [2013] = true, [2055] = true}

-- on_restart is installed as sysbench.hooks.before_restart_event: sysbench
-- calls it when a statement fails with an ignorable error (deadlock, lock wait
-- timeout, serialization failure) and then restarts the event. PostgreSQL
-- leaves the transaction aborted, so roll it back; MySQL has already rolled
-- back, and an extra ROLLBACK is harmless.
function M.on_restart(errdesc)
   if errdesc and reconnect_errnos[errdesc.sql_errno] then
      M.close_all()
      M.prepare_all()
      return
   end
   if M.in_trx then
      M.in_trx = false
      M.con:query("ROLLBACK")
   end
end

-- install_thread_hooks defines sysbench's per-thread hooks: thread_init
-- runs init (when given: it reads the script's options, so a bad value fails
-- before any connection), connects and prepares the statements, then runs
-- connected (when given); thread_done closes them; a restarted event
-- re-prepares or rolls back (on_restart).
function M.install_thread_hooks(init, connected)
   function thread_init()
      if init then init() end
      M.connect()
      if connected then connected() end
   end
   function thread_done()
      M.disconnect()
   end
   sysbench.hooks.before_restart_event = M.on_restart
end

-- ------------------------------------------------------------------ prepare

local function create_table(drv, con, n)
   local name = drv:name()
   local id_def, engine_def = nil, ""
   if name == "mysql" then
      id_def = "INTEGER NOT NULL AUTO_INCREMENT"
      engine_def = "/*! ENGINE = " .. sysbench.opt.mysql_storage_engine .. " */"
   elseif name == "pgsql" then
      id_def = "SERIAL"
   else
      error("dbbench scripts support the mysql and pgsql drivers, not " .. name)
   end
   print(string.format("Creating table 'sbtest%d'...", n))
   con:query(string.format([[
CREATE TABLE sbtest%d(
  id %s,
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  PRIMARY KEY (id)
) %s]], n, id_def, engine_def))
   local size = sysbench.opt.table_size
   print(string.format("Inserting %d records into 'sbtest%d'", size, n))
   con:bulk_insert_init("INSERT INTO sbtest" .. n .. "(k, c, pad) VALUES")
   for _ = 1, size do
      con:bulk_insert_next(string.format("(%d, '%s', '%s')",
         sysbench.rand.uniform(1, size), M.c_value(),
         sysbench.rand.string(M.pad_template)))
   end
   con:bulk_insert_done()
   -- The index on k is built after the load, like the reference method.
   print(string.format("Creating a secondary index on 'sbtest%d'...", n))
   con:query(string.format("CREATE INDEX k_%d ON sbtest%d(k)", n, n))
end

-- cmd_prepare builds sbtest1..N; with --threads > 1 tables load in parallel.
function M.cmd_prepare()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for n = sysbench.tid % sysbench.opt.threads + 1, sysbench.opt.tables, sysbench.opt.threads do
      create_table(drv, con, n)
   end
   con:disconnect()
end

function M.cmd_cleanup()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for n = 1, sysbench.opt.tables do
      print(string.format("Dropping table 'sbtest%d'...", n))
      con:query("DROP TABLE IF EXISTS sbtest" .. n)
   end
   con:disconnect()
end

function M.install_commands()
   sysbench.cmdline.commands = {
      prepare = {M.cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
   }
   cleanup = M.cmd_cleanup
end

-- check_choice fails early, with the accepted values, on a bad enum option.
function M.check_choice(opt, value, choices)
   for _, c in ipairs(choices) do
      if c == value then return value end
   end
   error(string.format("--%s=%s is not one of %s", opt, tostring(value),
      table.concat(choices, ", ")), 0)
end

function M.positive(opt, value)
   value = tonumber(value)
   if value == nil or value < 1 then
      error(string.format("--%s must be a positive integer", opt), 0)
   end
   return math.floor(value)
end

-- ------------------------------------------------------------------ zipfian

-- zipf returns a sampler of ranks in [1, n] with P(k) proportional to k^-s,
-- using rejection-inversion sampling (Hörmann and Derflinger, "Rejection-
-- inversion to generate variates from monotone discrete distributions", 1996).
-- Setup is O(1), so a 50-million-row table costs nothing per thread, and any
-- exponent s > 0 works (sysbench 1.0.20 has no zipfian --rand-type at all).
function M.zipf(n, s)
   assert(n >= 1, "zipf: n must be >= 1")
   assert(s > 0, "zipf: the exponent must be > 0")
   local log, exp, floor = math.log, math.exp, math.floor
   -- log1p(x)/x and expm1(x)/x, accurate near 0 where the plain forms cancel.
   local function helper1(x)
      if math.abs(x) > 1e-8 then return log(1 + x) / x end
      return 1 - x * (0.5 - x * (1 / 3 - 0.25 * x))
   end
   local function helper2(x)
      if math.abs(x) > 1e-8 then return (exp(x) - 1) / x end
      return 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x))
   end
   local function h(x) return exp(-s * log(x)) end
   local function H(x)
      local lx = log(x)
      return helper2((1 - s) * lx) * lx
   end
   local function Hinv(x)
      local t = x * (1 - s)
      if t < -1 then t = -1 end
      return exp(helper1(t) * x)
   end
   local hx1 = H(1.5) - 1
   local hn = H(n + 0.5)
   local sv = 2 - Hinv(H(2.5) - h(2))
   local rand = sysbench.rand.uniform_double
   return function()
      while true do
         local u = hn + rand() * (hx1 - hn)
         local x = Hinv(u)
         local k = floor(x + 0.5)
         if k < 1 then k = 1 elseif k > n then k = n end
         if k - x <= sv or u >= H(k + 0.5) - h(k) then
            return k
         end
      end
   end
end

return M
