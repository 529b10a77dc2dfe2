{{/* Name of the chart. */}}
{{- define "dbbench.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name, with the chart's name unless it contains it. */}}
{{- define "dbbench.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "dbbench.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "dbbench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "dbbench.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dbbench.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end }}

{{- define "dbbench.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "dbbench.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
dbbench.mirrored is the image reference (index . 1) pulled from
.Values.registry when that is set and the reference is on docker.io: the
reference keeps its docker.io path under the registry (REGISTRY/dbbench/agent),
the layout make push and make release write.
*/}}
{{- define "dbbench.mirrored" -}}
{{- $ref := index . 1 -}}
{{- $registry := (index . 0).Values.registry -}}
{{- if and $registry (hasPrefix "docker.io/" $ref) -}}
{{- printf "%s/%s" (trimSuffix "/" $registry) (trimPrefix "docker.io/" $ref) -}}
{{- else -}}
{{- $ref -}}
{{- end -}}
{{- end }}

{{/* dbbench.image is the manager's image: repository:tag, @digest when pinned. */}}
{{- define "dbbench.image" -}}
{{- $ref := printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- with .Values.image.digest }}{{ $ref = printf "%s@%s" $ref . }}{{ end -}}
{{- include "dbbench.mirrored" (list . $ref) -}}
{{- end }}

{{/* dbbench.agentImage is the client pods' default image. */}}
{{- define "dbbench.agentImage" -}}
{{- include "dbbench.mirrored" (list . .Values.agentImage) -}}
{{- end }}
