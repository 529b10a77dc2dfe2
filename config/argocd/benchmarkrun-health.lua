-- Argo CD health check for dbbench.io/BenchmarkRun.
-- Install it in argocd-cm under
--   resource.customizations.health.dbbench.io_BenchmarkRun
-- A run is Progressing while cells run, Healthy when every cell succeeded and
-- no regression was found, Degraded when cells failed or the Regressed
-- condition is True.
local hs = {status = "Progressing", message = "Waiting for the run to start"}
if obj.status == nil then
  return hs
end
local conditions = {}
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local progress = obj.status.progress or ""
local regressed = conditions["Regressed"]
if conditions["Failed"] ~= nil and conditions["Failed"].status == "True" then
  hs.status = "Degraded"
  hs.message = conditions["Failed"].message
elseif conditions["Succeeded"] ~= nil and conditions["Succeeded"].status == "True" then
  if regressed ~= nil and regressed.status == "True" then
    hs.status = "Degraded"
    hs.message = regressed.message
  elseif obj.spec ~= nil and obj.spec.regression ~= nil and regressed == nil then
    hs.status = "Progressing"
    hs.message = "Waiting for the regression verdict"
  else
    hs.status = "Healthy"
    hs.message = conditions["Succeeded"].message
  end
else
  hs.status = "Progressing"
  hs.message = "Cells finished: " .. progress
  if obj.status.currentStep ~= nil and obj.status.currentStep ~= "" then
    hs.message = hs.message .. ", running " .. obj.status.currentStep
  end
end
return hs
