{{/* Name of the operator's objects: the Deployment, ServiceAccount, Role. */}}
{{- define "pg-operator.name" -}}
pg-operator
{{- end -}}

{{/* Labels every object of the chart carries. */}}
{{- define "pg-operator.labels" -}}
app.kubernetes.io/name: pg-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: oplab
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Labels that select the operator's pods. */}}
{{- define "pg-operator.selectorLabels" -}}
app.kubernetes.io/name: pg-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Image reference. */}}
{{- define "pg-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
