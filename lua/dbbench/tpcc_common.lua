-- tpcc_common.lua: schema, random data and the loader of dbbench's TPC-C,
-- written from the TPC Benchmark C Standard Specification (revision 5.11):
-- clause 1 (logical database design) and clause 4.3 (population).
--
-- One "table set" is the nine TPC-C tables with a numeric suffix
-- (warehouse1, district1, ...); --tables=N makes N independent sets, each with
-- --scale warehouses, like sysbench-tpcc. Loading is parallel: with --threads=T
-- the T threads share the warehouses of all sets.

local M = {}

local ffi = require("ffi")
pcall(ffi.cdef, "int usleep(unsigned int usec);")

M.DISTRICTS = 10            -- per warehouse (clause 4.3.3.1)
M.MAX_ITEMS = 15            -- order lines per order: 5..15

-- configure sets the cardinalities. divisor 1 is the specification's (100,000
-- items, 3,000 customers and orders per district, orders 2,101..3,000 not yet
-- delivered); a larger divisor shrinks items, customers and orders by that
-- factor for quick tests and demos. That is not TPC-C any more: prepare and
-- run must use the same divisor, and results are not comparable across
-- divisors.
function M.configure(divisor)
   divisor = math.floor(tonumber(divisor) or 1)
   if divisor < 1 or divisor > 100 then
      error("--data_divisor must be between 1 and 100", 0)
   end
   M.ITEMS = math.floor(100000 / divisor)
   M.CUSTOMERS = math.floor(3000 / divisor)
   M.ORDERS = M.CUSTOMERS
   M.NEW_ORDERS_FROM = math.floor(M.ORDERS * 0.7) + 1
   -- Last names come from 1000 numbers; the first 1000 customers of a district
   -- take each once so that every name exists (clause 4.3.3.1).
   M.NAMES = math.min(1000, M.CUSTOMERS)
end
M.configure(1)

-- Constants of the non-uniform random function NURand (clause 2.1.6). C_LAST
-- at load and at run time differ by 66, inside the allowed [65, 119] and not
-- 96 or 112 (clause 2.1.6.1); the others may be any value in their range.
M.C_LAST_LOAD = 157
M.C_LAST_RUN = 223
M.C_ID = 259
M.C_OL_I_ID = 7911

local floor = math.floor
local rand = sysbench.rand.uniform

function M.nurand(a, x, y, c)
   return (((bit.bor(rand(0, a), rand(x, y))) + c) % (y - x + 1)) + x
end

-- Customer last names are three syllables from a number 0..999 (clause 4.3.2.3).
local syllables = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}
function M.last_name(n)
   return syllables[floor(n / 100) + 1] .. syllables[floor(n / 10) % 10 + 1] .. syllables[n % 10 + 1]
end

-- Random strings. The specification asks for random alphanumeric strings of
-- random length; generating every character costs most of the load time in
-- Lua, so strings are substrings at random offsets of a per-thread pool of
-- random characters. Values still differ row to row and compress like random
-- text, which is what matters to the engines.
local POOL = 8192
local alpha_pool, digit_pool

local function init_pools()
   if alpha_pool then return end
   local t = {}
   local chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
   for i = 1, POOL do
      local j = rand(1, #chars)
      t[i] = chars:sub(j, j)
   end
   alpha_pool = table.concat(t)
   for i = 1, POOL do t[i] = tostring(rand(0, 9)) end
   digit_pool = table.concat(t)
end

-- pool_string is min..max characters of pool from a random offset.
local function pool_string(pool, min, max)
   local len = rand(min, max)
   local off = rand(1, POOL - len)
   return pool:sub(off, off + len - 1)
end

function M.astring(min, max)
   init_pools()
   return pool_string(alpha_pool, min, max)
end

function M.nstring(min, max)
   init_pools()
   return pool_string(digit_pool, min, max)
end

-- data_string is I_DATA / S_DATA: 26..50 characters, 10 % containing "ORIGINAL".
function M.data_string()
   local s = M.astring(26, 50)
   if rand(1, 10) == 1 then
      local pos = rand(1, #s - 8)
      s = s:sub(1, pos - 1) .. "ORIGINAL" .. s:sub(pos + 8)
   end
   return s
end

function M.zip() return M.nstring(4, 4) .. "11111" end

function M.money(lo, hi) -- two decimals, as a string
   return string.format("%.2f", rand(lo * 100, hi * 100) / 100)
end

-- ------------------------------------------------------------------ schema

-- table_names lists one set's tables, children first (the drop order).
M.tables = {"order_line", "new_order", "orders", "history", "customer", "district", "stock", "item", "warehouse"}

local function ddl(drv, set)
   local mysql = drv:name() == "mysql"
   local ts = mysql and "DATETIME" or "TIMESTAMP"
   local engine = mysql and (" ENGINE=" .. sysbench.opt.mysql_storage_engine) or ""
   local s = set
   local addr = function(p)
      return string.format("%s_street_1 VARCHAR(20), %s_street_2 VARCHAR(20), %s_city VARCHAR(20), " ..
         "%s_state CHAR(2), %s_zip CHAR(9)", p, p, p, p, p)
   end
   return {
      string.format([[CREATE TABLE warehouse%d (
  w_id SMALLINT NOT NULL, w_name VARCHAR(10), %s, w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id))%s]], s, addr("w"), engine),
      string.format([[CREATE TABLE district%d (
  d_id SMALLINT NOT NULL, d_w_id SMALLINT NOT NULL, d_name VARCHAR(10), %s,
  d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id))%s]], s, addr("d"), engine),
      string.format([[CREATE TABLE customer%d (
  c_id INT NOT NULL, c_d_id SMALLINT NOT NULL, c_w_id SMALLINT NOT NULL,
  c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), %s, c_phone CHAR(16),
  c_since %s, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4),
  c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT,
  c_delivery_cnt INT, c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id))%s]], s, addr("c"), ts, engine),
      string.format("CREATE INDEX idx_customer%d ON customer%d (c_w_id, c_d_id, c_last, c_first)", s, s),
      -- HISTORY has no primary key in the specification.
      string.format([[CREATE TABLE history%d (
  h_c_id INT, h_c_d_id SMALLINT, h_c_w_id SMALLINT, h_d_id SMALLINT, h_w_id SMALLINT,
  h_date %s, h_amount DECIMAL(6,2), h_data VARCHAR(24))%s]], s, ts, engine),
      string.format([[CREATE TABLE orders%d (
  o_id INT NOT NULL, o_d_id SMALLINT NOT NULL, o_w_id SMALLINT NOT NULL, o_c_id INT,
  o_entry_d %s, o_carrier_id SMALLINT, o_ol_cnt SMALLINT, o_all_local SMALLINT,
  PRIMARY KEY (o_w_id, o_d_id, o_id))%s]], s, ts, engine),
      string.format("CREATE INDEX idx_orders%d ON orders%d (o_w_id, o_d_id, o_c_id, o_id)", s, s),
      string.format([[CREATE TABLE new_order%d (
  no_o_id INT NOT NULL, no_d_id SMALLINT NOT NULL, no_w_id SMALLINT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id))%s]], s, engine),
      string.format([[CREATE TABLE order_line%d (
  ol_o_id INT NOT NULL, ol_d_id SMALLINT NOT NULL, ol_w_id SMALLINT NOT NULL,
  ol_number SMALLINT NOT NULL, ol_i_id INT, ol_supply_w_id SMALLINT, ol_delivery_d %s,
  ol_quantity SMALLINT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))%s]], s, ts, engine),
      string.format([[CREATE TABLE item%d (
  i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50),
  PRIMARY KEY (i_id))%s]], s, engine),
      string.format([[CREATE TABLE stock%d (
  s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24),
  s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24),
  s_ytd DECIMAL(8,0), s_order_cnt SMALLINT, s_remote_cnt SMALLINT, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id))%s]], s, engine),
   }
end

-- Foreign keys (--use_fk), added after the load: checking them row by row
-- during the load would only slow it down, and the data is consistent.
local function fk_ddl(s)
   local fk = function(tbl, name, cols, ref, refcols)
      return string.format("ALTER TABLE %s%d ADD CONSTRAINT fk_%s%d FOREIGN KEY (%s) REFERENCES %s%d (%s)",
         tbl, s, name, s, cols, ref, s, refcols)
   end
   return {
      fk("district", "district_w", "d_w_id", "warehouse", "w_id"),
      fk("customer", "customer_d", "c_w_id, c_d_id", "district", "d_w_id, d_id"),
      fk("history", "history_c", "h_c_w_id, h_c_d_id, h_c_id", "customer", "c_w_id, c_d_id, c_id"),
      fk("history", "history_d", "h_w_id, h_d_id", "district", "d_w_id, d_id"),
      fk("orders", "orders_c", "o_w_id, o_d_id, o_c_id", "customer", "c_w_id, c_d_id, c_id"),
      fk("new_order", "new_order_o", "no_w_id, no_d_id, no_o_id", "orders", "o_w_id, o_d_id, o_id"),
      fk("order_line", "order_line_o", "ol_w_id, ol_d_id, ol_o_id", "orders", "o_w_id, o_d_id, o_id"),
      fk("order_line", "order_line_s", "ol_supply_w_id, ol_i_id", "stock", "s_w_id, s_i_id"),
      fk("stock", "stock_w", "s_w_id", "warehouse", "w_id"),
      fk("stock", "stock_i", "s_i_id", "item", "i_id"),
   }
end

-- ------------------------------------------------------------------ loading

local function bulk(con, head, rows_fn)
   con:bulk_insert_init(head)
   rows_fn(function(v) con:bulk_insert_next(v) end)
   con:bulk_insert_done()
end

local function load_items(con, s)
   bulk(con, string.format("INSERT INTO item%d (i_id, i_im_id, i_name, i_price, i_data) VALUES", s), function(put)
      for i = 1, M.ITEMS do
         put(string.format("(%d,%d,'%s',%s,'%s')", i, rand(1, 10000), M.astring(14, 24),
            M.money(1, 100), M.data_string()))
      end
   end)
end

local function address()
   return string.format("'%s','%s','%s','%s','%s'", M.astring(10, 20), M.astring(10, 20),
      M.astring(10, 20), M.astring(2, 2), M.zip())
end

local function tax() return string.format("%.4f", rand(0, 2000) / 10000) end

function M.load_warehouse(con, s, w)
   local now = "NOW()"
   con:query(string.format("INSERT INTO warehouse%d VALUES (%d,'%s',%s,%s,300000.00)",
      s, w, M.astring(6, 10), address(), tax()))

   bulk(con, string.format("INSERT INTO stock%d VALUES", s), function(put)
      for i = 1, M.ITEMS do
         local d = {}
         for j = 1, 10 do d[j] = M.astring(24, 24) end
         put(string.format("(%d,%d,%d,'%s','%s','%s','%s','%s','%s','%s','%s','%s','%s',0,0,0,'%s')",
            i, w, rand(10, 100), d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10],
            M.data_string()))
      end
   end)

   bulk(con, string.format("INSERT INTO district%d VALUES", s), function(put)
      for d = 1, M.DISTRICTS do
         put(string.format("(%d,%d,'%s',%s,%s,30000.00,%d)", d, w, M.astring(6, 10), address(), tax(),
            M.ORDERS + 1))
      end
   end)

   bulk(con, string.format("INSERT INTO customer%d VALUES", s), function(put)
      for d = 1, M.DISTRICTS do
         for c = 1, M.CUSTOMERS do
            local last
            if c <= M.NAMES then
               last = M.last_name(c - 1)
            else
               last = M.last_name(M.nurand(255, 0, 999, M.C_LAST_LOAD) % M.NAMES)
            end
            put(string.format("(%d,%d,%d,'%s','OE','%s',%s,'%s',%s,'%s',50000.00,%s,-10.00,10.00,1,0,'%s')",
               c, d, w, M.astring(8, 16), last, address(), M.nstring(16, 16), now,
               rand(1, 10) == 1 and "BC" or "GC", string.format("%.4f", rand(0, 5000) / 10000),
               M.astring(300, 500)))
         end
      end
   end)

   bulk(con, string.format("INSERT INTO history%d VALUES", s), function(put)
      for d = 1, M.DISTRICTS do
         for c = 1, M.CUSTOMERS do
            put(string.format("(%d,%d,%d,%d,%d,%s,10.00,'%s')", c, d, w, d, w, now, M.astring(12, 24)))
         end
      end
   end)

   -- Orders: customer ids are a random permutation of 1..3000 per district.
   local ol_cnt = {}
   bulk(con, string.format("INSERT INTO orders%d VALUES", s), function(put)
      local perm = {}
      for d = 1, M.DISTRICTS do
         for i = 1, M.CUSTOMERS do perm[i] = i end
         for i = M.CUSTOMERS, 2, -1 do
            local j = rand(1, i)
            perm[i], perm[j] = perm[j], perm[i]
         end
         ol_cnt[d] = {}
         for o = 1, M.ORDERS do
            local n = rand(5, M.MAX_ITEMS)
            ol_cnt[d][o] = n
            put(string.format("(%d,%d,%d,%d,%s,%s,%d,1)", o, d, w, perm[o], now,
               o < M.NEW_ORDERS_FROM and tostring(rand(1, 10)) or "NULL", n))
         end
      end
   end)

   bulk(con, string.format("INSERT INTO order_line%d VALUES", s), function(put)
      for d = 1, M.DISTRICTS do
         for o = 1, M.ORDERS do
            local delivered = o < M.NEW_ORDERS_FROM
            for l = 1, ol_cnt[d][o] do
               put(string.format("(%d,%d,%d,%d,%d,%d,%s,5,%s,'%s')", o, d, w, l, rand(1, M.ITEMS), w,
                  delivered and now or "NULL", delivered and "0.00" or M.money(0.01, 9999.99),
                  M.astring(24, 24)))
            end
         end
      end
   end)

   bulk(con, string.format("INSERT INTO new_order%d VALUES", s), function(put)
      for d = 1, M.DISTRICTS do
         for o = M.NEW_ORDERS_FROM, M.ORDERS do
            put(string.format("(%d,%d,%d)", o, d, w))
         end
      end
   end)
end

-- ------------------------------------------------ prepare / cleanup commands

-- The threads of a parallel prepare coordinate through a small table,
-- dbbench_tpcc_load: thread 0 creates the schema and the item tables, then
-- sets items_done; every thread loads its share of (set, warehouse) pairs and
-- bumps threads_done; the last one adds the foreign keys and drops the table.

local function sleep_ms(ms) ffi.C.usleep(ms * 1000) end

local function table_exists(drv, con, name)
   local schema = drv:name() == "mysql" and "DATABASE()" or "current_schema()"
   local n = con:query_row(string.format(
      "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = %s AND table_name = '%s'", schema, name))
   return tonumber(n) > 0
end

local function wait_items(drv, con)
   for _ = 1, 36000 do -- 2 hours at most
      if table_exists(drv, con, "dbbench_tpcc_load") then
         local done = con:query_row("SELECT items_done FROM dbbench_tpcc_load")
         if tonumber(done) == 1 then return end
      end
      sleep_ms(200)
   end
   error("timed out waiting for thread 0 to create the TPC-C schema")
end

function M.cmd_prepare()
   M.configure(sysbench.opt.data_divisor)
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local sets, scale, threads = sysbench.opt.tables, sysbench.opt.scale, sysbench.opt.threads
   local tid = sysbench.tid % threads
   if tid == 0 then
      if table_exists(drv, con, "dbbench_tpcc_load") then
         error("table dbbench_tpcc_load exists: an earlier prepare did not finish; run cleanup first", 0)
      end
      con:query("CREATE TABLE dbbench_tpcc_load (items_done INT, threads_done INT)")
      con:query("INSERT INTO dbbench_tpcc_load VALUES (0, 0)")
      for s = 1, sets do
         print(string.format("Creating TPC-C table set %d (%d warehouses)...", s, scale))
         for _, q in ipairs(ddl(drv, s)) do con:query(q) end
         load_items(con, s)
      end
      con:query("UPDATE dbbench_tpcc_load SET items_done = 1")
   else
      wait_items(drv, con)
   end

   local job = 0
   for s = 1, sets do
      for w = 1, scale do
         if job % threads == tid then
            print(string.format("Thread %d: loading warehouse %d of set %d", tid, w, s))
            M.load_warehouse(con, s, w)
         end
         job = job + 1
      end
   end

   con:query("BEGIN")
   local done = tonumber(con:query_row("SELECT threads_done FROM dbbench_tpcc_load FOR UPDATE"))
   con:query("UPDATE dbbench_tpcc_load SET threads_done = threads_done + 1")
   con:query("COMMIT")
   if done + 1 == threads then
      if sysbench.opt.use_fk then
         for s = 1, sets do
            print(string.format("Adding foreign keys to set %d...", s))
            for _, q in ipairs(fk_ddl(s)) do con:query(q) end
         end
      end
      for s = 1, sets do
         if drv:name() == "pgsql" then
            for _, t in ipairs(M.tables) do con:query(string.format("ANALYZE %s%d", t, s)) end
         else
            for _, t in ipairs(M.tables) do con:query(string.format("ANALYZE TABLE %s%d", t, s)) end
         end
      end
      con:query("DROP TABLE dbbench_tpcc_load")
      print("TPC-C load complete")
   end
   con:disconnect()
end

function M.cmd_cleanup()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local mysql = drv:name() == "mysql"
   if mysql then con:query("SET FOREIGN_KEY_CHECKS = 0") end
   for s = 1, sysbench.opt.tables do
      print(string.format("Dropping TPC-C table set %d...", s))
      for _, t in ipairs(M.tables) do
         con:query(string.format("DROP TABLE IF EXISTS %s%d%s", t, s, mysql and "" or " CASCADE"))
      end
   end
   con:query("DROP TABLE IF EXISTS dbbench_tpcc_load")
   con:disconnect()
end

return M
