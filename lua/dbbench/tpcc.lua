#!/usr/bin/env sysbench
-- tpcc.lua: dbbench's TPC-C workload for sysbench, written from the TPC
-- Benchmark C Standard Specification (revision 5.11), for MySQL, MariaDB and
-- PostgreSQL.
--
--   sysbench tpcc.lua --scale=W --tables=N --threads=T prepare   # schema + data
--   sysbench tpcc.lua --scale=W --tables=N --threads=T --time=S --report-interval=1 run
--   sysbench tpcc.lua --tables=N cleanup
--
-- Knobs named like sysbench-tpcc's: --scale warehouses per table set, --tables
-- table sets, --use_fk foreign keys, --trx_level RR|RC|SER.
--
-- One sysbench event is one TPC-C transaction, drawn from the standard mix
-- new-order 10 : payment 10 : order-status 1 : delivery 1 : stock-level 1 (out
-- of 23). Keying and think times are off (every thread submits back to back),
-- which is how database benchmarks use TPC-C, not an audited result. Each event
-- picks a table set and a home warehouse uniformly at random.
--
-- sysbench's tps is TPC-C transactions per second (all five kinds); the 1 % of
-- new-orders that roll back by design are counted as events too. New orders
-- per minute can be measured exactly from SUM(d_next_o_id) before and after a
-- run (the dbbench agent does this).
--
-- Statements are plain queries (con:query) with literal values, not prepared
-- statements: the transactions read values back (d_next_o_id, prices, ...),
-- and sysbench 1.0.20 cannot fetch rows from a server-side prepared statement.
-- Every value is a number or text this script generated itself.

do
   local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
   package.path = dir .. "?.lua;" .. package.path
end
local T = require("tpcc_common")

sysbench.cmdline.options = {
   scale = {"Warehouses per table set", 1},
   tables = {"Number of table sets", 1},
   use_fk = {"Add foreign keys (at prepare)", 0},
   trx_level = {"Isolation level: RR, RC or SER", "RR"},
   mysql_storage_engine = {"Storage engine, if MySQL/MariaDB is used", "innodb"},
   data_divisor = {"Divide items, customers and orders by this (tests only; not TPC-C; same value for prepare and run)", 1},
}

sysbench.cmdline.commands = {
   prepare = {T.cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
}
cleanup = T.cmd_cleanup

local rand = sysbench.rand.uniform
local fmt = string.format
local con, drv, mysql
local in_trx = false

local isolation = {
   RR = "REPEATABLE READ",
   RC = "READ COMMITTED",
   SER = "SERIALIZABLE",
}

function thread_init()
   T.configure(sysbench.opt.data_divisor)
   local level = isolation[string.upper(tostring(sysbench.opt.trx_level))]
   if not level then
      error("--trx_level must be RR, RC or SER, not " .. tostring(sysbench.opt.trx_level), 0)
   end
   drv = sysbench.sql.driver()
   con = drv:connect()
   mysql = drv:name() == "mysql"
   if mysql then
      con:query("SET SESSION TRANSACTION ISOLATION LEVEL " .. level)
   else
      con:query("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL " .. level)
   end
end

function thread_done()
   con:disconnect()
end

-- A deadlock, lock wait timeout or serialization failure makes sysbench
-- restart the event; roll back whatever the transaction did first
-- (PostgreSQL keeps an aborted transaction open until then).
function sysbench.hooks.before_restart_event(err)
   if in_trx then
      in_trx = false
      con:query("ROLLBACK")
   end
end

local function begin()
   con:query("BEGIN")
   in_trx = true
end

local function commit()
   con:query("COMMIT")
   in_trx = false
end

local function rollback()
   con:query("ROLLBACK")
   in_trx = false
end

local function row(q)
   local rs = con:query(q)
   if rs == nil then return nil end
   return rs:fetch_row()
end

-- other_warehouse returns a warehouse different from w (or w with scale 1).
local function other_warehouse(w)
   local scale = sysbench.opt.scale
   if scale == 1 then return w end
   local o = rand(1, scale - 1)
   if o >= w then o = o + 1 end
   return o
end

-- customer_by_name returns the customer id at position ceil(n/2) among the
-- customers with that last name, ordered by first name (clause 2.5.2.2).
local function customer_by_name(s, w, d, last)
   local rs = con:query(fmt("SELECT c_id FROM customer%d WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s' " ..
      "ORDER BY c_first", s, w, d, last))
   local n = rs and rs.nrows or 0
   if n == 0 then return nil end
   local want = math.floor((n + 1) / 2)
   local id
   for _ = 1, want do
      local r = rs:fetch_row()
      if r == nil then break end
      id = r[1]
   end
   -- drain the rest so the connection is ready for the next statement
   while rs:fetch_row() do end
   return tonumber(id)
end

local function pick_customer(s, w, d)
   if rand(1, 100) <= 60 then
      return customer_by_name(s, w, d, T.last_name(T.nurand(255, 0, 999, T.C_LAST_RUN) % T.NAMES))
   end
   return T.nurand(1023, 1, T.CUSTOMERS, T.C_ID)
end

-- ------------------------------------------------------------ transactions

local items, supply, qty = {}, {}, {}
local order_idx = {}

-- New-Order (clause 2.4).
local function new_order(s, w)
   local d = rand(1, T.DISTRICTS)
   local c = T.nurand(1023, 1, T.CUSTOMERS, T.C_ID)
   local n = rand(5, T.MAX_ITEMS)
   local rollback_last = rand(1, 100) == 1
   local all_local = 1
   for i = 1, n do
      items[i] = T.nurand(8191, 1, T.ITEMS, T.C_OL_I_ID)
      supply[i] = w
      if sysbench.opt.scale > 1 and rand(1, 100) == 1 then
         supply[i] = other_warehouse(w)
         all_local = 0
      end
      qty[i] = rand(1, 10)
      order_idx[i] = i
   end
   if rollback_last then items[n] = T.ITEMS + 1 end -- an unused item number
   for i = n + 1, #order_idx do order_idx[i] = nil end
   -- Lock stock rows in one global order to keep deadlocks rare.
   table.sort(order_idx, function(a, b)
      if supply[a] ~= supply[b] then return supply[a] < supply[b] end
      return items[a] < items[b]
   end)

   begin()
   row(fmt("SELECT c_discount, c_last, c_credit, w_tax FROM customer%d, warehouse%d " ..
      "WHERE w_id = %d AND c_w_id = w_id AND c_d_id = %d AND c_id = %d", s, s, w, d, c))
   local dr = row(fmt("SELECT d_next_o_id, d_tax FROM district%d WHERE d_w_id = %d AND d_id = %d FOR UPDATE",
      s, w, d))
   if dr == nil then
      error(string.format("district %d/%d of table set %d not found: was the data prepared with the same --scale and --data_divisor?", w, d, s), 0)
   end
   local o = tonumber(dr[1])
   con:query(fmt("UPDATE district%d SET d_next_o_id = %d WHERE d_w_id = %d AND d_id = %d", s, o + 1, w, d))
   con:query(fmt("INSERT INTO orders%d (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, " ..
      "o_all_local) VALUES (%d, %d, %d, %d, NOW(), NULL, %d, %d)", s, o, d, w, c, n, all_local))
   con:query(fmt("INSERT INTO new_order%d (no_o_id, no_d_id, no_w_id) VALUES (%d, %d, %d)", s, o, d, w))
   for k = 1, n do
      local i = order_idx[k]
      local it = row(fmt("SELECT i_price, i_name, i_data FROM item%d WHERE i_id = %d", s, items[i]))
      if it == nil then
         -- The 1 % of new-orders with an unused item roll back (clause 2.4.2.3).
         rollback()
         return
      end
      local st = row(fmt("SELECT s_quantity, s_data, s_dist_%02d FROM stock%d WHERE s_i_id = %d AND s_w_id = %d " ..
         "FOR UPDATE", d, s, items[i], supply[i]))
      local sq = tonumber(st[1])
      if sq >= qty[i] + 10 then sq = sq - qty[i] else sq = sq - qty[i] + 91 end
      con:query(fmt("UPDATE stock%d SET s_quantity = %d, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1, " ..
         "s_remote_cnt = s_remote_cnt + %d WHERE s_i_id = %d AND s_w_id = %d",
         s, sq, qty[i], supply[i] ~= w and 1 or 0, items[i], supply[i]))
      con:query(fmt("INSERT INTO order_line%d (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, " ..
         "ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (%d, %d, %d, %d, %d, %d, NULL, %d, %.2f, '%s')",
         s, o, d, w, k, items[i], supply[i], qty[i], qty[i] * tonumber(it[1]), st[3]))
   end
   commit()
end

-- Payment (clause 2.5).
local function payment(s, w)
   local d = rand(1, T.DISTRICTS)
   local cw, cd = w, d
   if sysbench.opt.scale > 1 and rand(1, 100) > 85 then
      cw = other_warehouse(w)
      cd = rand(1, T.DISTRICTS)
   end
   local amount = rand(100, 500000) / 100

   begin()
   con:query(fmt("UPDATE warehouse%d SET w_ytd = w_ytd + %.2f WHERE w_id = %d", s, amount, w))
   local wr = row(fmt("SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse%d " ..
      "WHERE w_id = %d", s, w))
   con:query(fmt("UPDATE district%d SET d_ytd = d_ytd + %.2f WHERE d_w_id = %d AND d_id = %d", s, amount, w, d))
   local dr = row(fmt("SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district%d " ..
      "WHERE d_w_id = %d AND d_id = %d", s, w, d))
   local c = pick_customer(s, cw, cd)
   if c == nil then
      rollback()
      return
   end
   local cr = row(fmt("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, " ..
      "c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer%d " ..
      "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d FOR UPDATE", s, cw, cd, c))
   if cr[10] == "BC" then
      local data = row(fmt("SELECT c_data FROM customer%d WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
         s, cw, cd, c))[1] or ""
      data = (fmt("%d %d %d %d %d %.2f|", c, cd, cw, d, w, amount) .. data):sub(1, 500)
      con:query(fmt("UPDATE customer%d SET c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + %.2f, " ..
         "c_payment_cnt = c_payment_cnt + 1, c_data = '%s' WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
         s, amount, amount, data, cw, cd, c))
   else
      con:query(fmt("UPDATE customer%d SET c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + %.2f, " ..
         "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
         s, amount, amount, cw, cd, c))
   end
   con:query(fmt("INSERT INTO history%d (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) " ..
      "VALUES (%d, %d, %d, %d, %d, NOW(), %.2f, '%s    %s')", s, c, cd, cw, d, w, amount,
      (wr[6] or ""):sub(1, 10), (dr[6] or ""):sub(1, 10)))
   commit()
end

-- Order-Status (clause 2.6), read-only.
local function order_status(s, w)
   local d = rand(1, T.DISTRICTS)
   begin()
   local c = pick_customer(s, w, d)
   if c == nil then
      commit()
      return
   end
   row(fmt("SELECT c_balance, c_first, c_middle, c_last FROM customer%d WHERE c_w_id = %d AND c_d_id = %d " ..
      "AND c_id = %d", s, w, d, c))
   local o = row(fmt("SELECT o_id, o_carrier_id, o_entry_d FROM orders%d WHERE o_w_id = %d AND o_d_id = %d " ..
      "AND o_c_id = %d ORDER BY o_id DESC LIMIT 1", s, w, d, c))
   if o ~= nil then
      con:query(fmt("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line%d " ..
         "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", s, w, d, o[1]))
   end
   commit()
end

-- Delivery (clause 2.7): all ten districts in one transaction.
local function delivery(s, w)
   local carrier = rand(1, 10)
   begin()
   for d = 1, T.DISTRICTS do
      local no = row(fmt("SELECT no_o_id FROM new_order%d WHERE no_w_id = %d AND no_d_id = %d " ..
         "ORDER BY no_o_id LIMIT 1 FOR UPDATE", s, w, d))
      if no ~= nil then
         local o = tonumber(no[1])
         con:query(fmt("DELETE FROM new_order%d WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %d", s, w, d, o))
         local c = row(fmt("SELECT o_c_id FROM orders%d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d",
            s, w, d, o))[1]
         con:query(fmt("UPDATE orders%d SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d",
            s, carrier, w, d, o))
         con:query(fmt("UPDATE order_line%d SET ol_delivery_d = NOW() WHERE ol_w_id = %d AND ol_d_id = %d " ..
            "AND ol_o_id = %d", s, w, d, o))
         local total = row(fmt("SELECT SUM(ol_amount) FROM order_line%d WHERE ol_w_id = %d AND ol_d_id = %d " ..
            "AND ol_o_id = %d", s, w, d, o))[1] or "0"
         con:query(fmt("UPDATE customer%d SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 " ..
            "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %s", s, total, w, d, c))
      end
   end
   commit()
end

-- Stock-Level (clause 2.8), read-only.
local function stock_level(s, w)
   local d = rand(1, T.DISTRICTS)
   local threshold = rand(10, 20)
   begin()
   local next_o = tonumber(row(fmt("SELECT d_next_o_id FROM district%d WHERE d_w_id = %d AND d_id = %d",
      s, w, d))[1])
   row(fmt("SELECT COUNT(DISTINCT s_i_id) FROM order_line%d, stock%d WHERE ol_w_id = %d AND ol_d_id = %d " ..
      "AND ol_o_id < %d AND ol_o_id >= %d AND s_w_id = %d AND s_i_id = ol_i_id AND s_quantity < %d",
      s, s, w, d, next_o, next_o - 20, w, threshold))
   commit()
end

-- The mix: 10 new-order, 10 payment, 1 each of the others, out of 23.
function event()
   local s = rand(1, sysbench.opt.tables)
   local w = rand(1, sysbench.opt.scale)
   local r = rand(1, 23)
   if r <= 10 then
      new_order(s, w)
   elseif r <= 20 then
      payment(s, w)
   elseif r == 21 then
      order_status(s, w)
   elseif r == 22 then
      delivery(s, w)
   else
      stock_level(s, w)
   end
end
