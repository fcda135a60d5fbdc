{{/* The chart's name, overridable. */}}
{{- define "chart-review.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release-qualified name of the chart's objects; components append "-web", "-worker". */}}
{{- define "chart-review.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "chart-review.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "chart-review.labels" -}}
helm.sh/chart: {{ include "chart-review.chart" . }}
{{ include "chart-review.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The labels selectors use; add app.kubernetes.io/component to tell the pods apart. */}}
{{- define "chart-review.selectorLabels" -}}
app.kubernetes.io/name: {{ include "chart-review.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "chart-review.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The Secret holding the App's private key and webhook secret. */}}
{{- define "chart-review.secretName" -}}
{{- .Values.github.existingSecret | default (printf "%s-github" (include "chart-review.fullname" .)) }}
{{- end }}

{{/* "true" when the queue lives in Redis (bundled or external), "" when in SQLite. */}}
{{- define "chart-review.redisMode" -}}
{{- if or .Values.redis.enabled .Values.redis.url .Values.redis.existingSecret }}true{{ end }}
{{- end }}

{{- define "chart-review.redisName" -}}
{{- printf "%s-redis" (include "chart-review.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Secret holding the bundled Redis's password: the chart's own, or redis.auth.existingSecret. */}}
{{- define "chart-review.redisSecretName" -}}
{{- .Values.redis.auth.existingSecret | default (include "chart-review.redisName" .) }}
{{- end }}

{{/* The env entry of the bundled Redis's password; the bot's REDIS_URL and Redis itself read it. */}}
{{- define "chart-review.redisPasswordEnv" -}}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "chart-review.redisSecretName" . }}
      key: {{ .Values.redis.auth.secretKey }}
{{- end }}

{{/* A pod annotation that rolls the pods reading the password when the chart's Secret of it
changes (on install each render draws its own password, so the values differ: harmless). */}}
{{- define "chart-review.redisSecretChecksum" -}}
{{- if and .Values.redis.enabled (not .Values.redis.auth.existingSecret) -}}
checksum/redis-secret: {{ include (print $.Template.BasePath "/redis-secret.yaml") . | sha256sum }}
{{- end }}
{{- end }}

{{/* Environment shared by the web and worker containers. */}}
{{- define "chart-review.env" -}}
- name: GITHUB_APP_ID
  value: {{ required "github.appId is required: the GitHub App's id" .Values.github.appId | quote }}
{{- with .Values.github.apiUrl }}
- name: GITHUB_API_URL
  value: {{ . | quote }}
{{- end }}
- name: GITHUB_PRIVATE_KEY_PATH
  value: /etc/chart-review/{{ .Values.github.secretKeys.privateKey }}
- name: GITHUB_WEBHOOK_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "chart-review.secretName" . }}
      key: {{ .Values.github.secretKeys.webhookSecret }}
- name: DATA_DIR
  value: {{ .Values.dataDir | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
# Each render of a PR's chart runs under these limits; the memory budget times the render
# processes (2) must fit in the container's memory limit, or the kernel kills the pod first.
- name: RENDER_MEMORY_MB
  value: {{ .Values.render.memoryMB | quote }}
- name: RENDER_CPU_SECONDS
  value: {{ .Values.render.cpuSeconds | quote }}
- name: RENDER_TIMEOUT
  value: {{ .Values.render.timeoutSeconds | quote }}
# git and Helm write under HOME; the root filesystem is read-only and the UID may be assigned.
- name: HOME
  value: /tmp
{{- if .Values.redis.existingSecret }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.existingSecretKey }}
{{- else if .Values.redis.url }}
- name: REDIS_URL
  value: {{ .Values.redis.url | quote }}
{{- else if .Values.redis.enabled }}
{{ include "chart-review.redisPasswordEnv" . }}
# Kubernetes expands $(REDIS_PASSWORD) from the entry above: the password stays in the Secret.
- name: REDIS_URL
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s:%d/0" (include "chart-review.redisName" .) (int .Values.redis.port) | quote }}
{{- end }}
{{- end }}

{{/* Volumes shared by the web and worker pods; the caller adds its data volume. */}}
{{- define "chart-review.volumes" -}}
- name: github
  secret:
    secretName: {{ include "chart-review.secretName" . }}
    items:
      - key: {{ .Values.github.secretKeys.privateKey }}
        path: {{ .Values.github.secretKeys.privateKey }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.scratchSizeLimit }}
{{- end }}

{{- define "chart-review.volumeMounts" -}}
- name: github
  mountPath: /etc/chart-review
  readOnly: true
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: {{ .Values.dataDir }}
{{- end }}

{{/* Scheduling and pull secrets shared by every pod. */}}
{{- define "chart-review.podPlacement" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
