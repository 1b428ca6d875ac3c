{{- define "oplab.name" -}}oplab{{- end -}}

{{- define "oplab.fullname" -}}
{{- printf "%s-oplab" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "oplab.labels" -}}
app.kubernetes.io/name: oplab
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The server's pods: the cells' NetworkPolicy lets exactly these in. */}}
{{- define "oplab.serverLabels" -}}
app.kubernetes.io/name: oplab
app.kubernetes.io/component: server
{{- end -}}

{{- define "oplab.cellsNamespace" -}}
{{- default (printf "%s-cells" .Release.Namespace) .Values.cells.namespace -}}
{{- end -}}

{{- define "oplab.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "oplab.storeSecret" -}}
{{- if .Values.postgres.enabled -}}{{ include "oplab.fullname" . }}-store{{- else -}}{{ required "store.existingSecret: name a Secret with the store's postgres:// URL under `url`, or set postgres.enabled" .Values.store.existingSecret }}{{- end -}}
{{- end -}}
