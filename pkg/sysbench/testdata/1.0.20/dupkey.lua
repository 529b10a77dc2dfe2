-- every event inserts an existing primary key; 1062 is ignored via --mysql-ignore-errors
function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
end
function event()
   con:query("BEGIN")
   con:query("SELECT c FROM sbtest1 WHERE id = 5")
   con:query("INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 1, 'x', 'y')")
   con:query("COMMIT")
end
function thread_done()
   con:disconnect()
end
