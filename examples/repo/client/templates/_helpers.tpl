{{/* Common labels, shared by every object of the chart. */}}
{{- define "client.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "client.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
