-- oltp_point_select with the Lua-side intermediate report hook enabled
package.path = "/usr/share/sysbench/?.lua;" .. package.path
require("oltp_common")
function prepare_statements()
   prepare_point_selects()
end
function event()
   execute_point_selects()
end
sysbench.hooks.report_intermediate = sysbench.report_default
