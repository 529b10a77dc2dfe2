-- Argo CD health check for every dbbench.io kind: BenchmarkRun,
-- BenchmarkSchedule, BenchmarkBisection and BenchmarkAck. It reads the
-- conditions each kind carries for tools that know none of them (Ready,
-- Reconciling, Stalled: docs/design.md, "Conditions GitOps tools read") the
-- way kstatus reads them, so Argo CD and Flux agree on every object:
--   Degraded     Stalled is True: a failed or regressed run, an upload the
--                user must repair, an invalid schedule, a refused ack, a
--                bisection that ended without an answer;
--   Progressing  the controller has not seen the latest generation yet, or
--                Reconciling is True (cells running, an upload or an
--                explanation still to come), or Ready is not True;
--   Healthy      Ready is True.
-- config/argocd/argocd-cm.yaml installs it for the four kinds.
local hs = {status = "Progressing", message = "Waiting for the dbbench controller"}
if obj.status == nil then
  return hs
end
local generation = obj.metadata and obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= nil and observed ~= generation then
  hs.message = "Waiting for the dbbench controller to observe generation " .. tostring(generation)
  return hs
end
local conditions = {}
for _, c in ipairs(obj.status.conditions or {}) do
  conditions[c.type] = c
end
local function explain(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end
local stalled, reconciling, ready = conditions["Stalled"], conditions["Reconciling"], conditions["Ready"]
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = explain(stalled)
elseif reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = explain(reconciling)
elseif ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = explain(ready)
elseif ready ~= nil then
  hs.status = "Progressing"
  hs.message = explain(ready)
else
  -- A status without these conditions (written by a controller older than
  -- them): kstatus calls such an object Current.
  hs.status = "Healthy"
  hs.message = "No Ready condition"
end
return hs
