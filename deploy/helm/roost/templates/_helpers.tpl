{{/*
Names. A pod is <fullname>-shard-<I>-<R>, and its StatefulSet's
controller-revision-hash label <fullname>-shard-<I>-<10 characters>, which
must fit 63: so the full name keeps to 40.
*/}}
{{- define "roost.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" }}
{{- end }}

{{- define "roost.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* One shard's StatefulSet, headless Service and PDB: (dict "root" $ "shard" I). */}}
{{- define "roost.shardName" -}}
{{- printf "%s-shard-%d" (include "roost.fullname" .root) (int .shard) }}
{{- end }}

{{- define "roost.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "roost.labels" -}}
helm.sh/chart: {{ include "roost.chart" . }}
{{ include "roost.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "roost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "roost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{/* The label that tells a shard's pods and Service: (dict "root" $ "shard" I). */}}
{{- define "roost.shardSelectorLabels" -}}
{{ include "roost.selectorLabels" .root }}
roost/shard: {{ .shard | quote }}
{{- end }}

{{- define "roost.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "roost.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "roost.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret the AWS_* variables (and maybe ROOST_REPOSITORY) come from; empty: none. */}}
{{- define "roost.repositorySecret" -}}
{{- if .Values.repository.existingSecret }}
{{- .Values.repository.existingSecret }}
{{- else if .Values.repository.credentials.accessKeyId }}
{{- printf "%s-repository" (include "roost.fullname" .) }}
{{- end }}
{{- end }}

{{- define "roost.grace" -}}
{{- $drain := .Values.server.drainPeriod | float64 }}
{{- $shutdown := .Values.server.shutdownTimeout | float64 }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- addf $drain $shutdown 10 | ceil | int }}
{{- else }}
{{- if le (.Values.terminationGracePeriodSeconds | float64) (addf $drain $shutdown 1) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be more than server.drainPeriod + server.shutdownTimeout + 1 (%v): Kubernetes would kill the server mid-drain" .Values.terminationGracePeriodSeconds (addf $drain $shutdown 1)) }}
{{- end }}
{{- .Values.terminationGracePeriodSeconds | int }}
{{- end }}
{{- end }}

{{/*
Checks the schema cannot express across values; each fails the render
with what to change.
*/}}
{{- define "roost.validate" -}}
{{- if and (not .Values.repository.uri) (not .Values.repository.existingSecret) }}
{{- fail "repository.uri is required (s3://BUCKET/PREFIX or file:///PATH), or repository.existingSecret with a ROOST_REPOSITORY key" }}
{{- end }}
{{- $c := .Values.repository.credentials }}
{{- if and (not .Values.repository.existingSecret) (or $c.accessKeyId $c.secretAccessKey) (not (and $c.accessKeyId $c.secretAccessKey)) }}
{{- fail "repository.credentials: accessKeyId and secretAccessKey go together" }}
{{- end }}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) }}
{{- fail "tls.enabled needs tls.secretName (a kubernetes.io/tls Secret)" }}
{{- end }}
{{- if and .Values.tls.clientCA.secretName (not .Values.tls.enabled) }}
{{- fail "tls.clientCA (mutual TLS) needs tls.enabled" }}
{{- end }}
{{- if and .Values.admin.enabled .Values.admin.remote (not .Values.tls.clientCA.secretName) }}
{{- fail "admin.remote needs mutual TLS (tls.clientCA.secretName): anyone who reaches the admin port could roll tables back; keep admin.remote false and use kubectl port-forward" }}
{{- end }}
{{- $_ := include "roost.grace" . }}
{{- end }}

{{/* A probe: (dict "root" $ "probe" .Values.probes.X). */}}
{{- define "roost.probe" -}}
{{- $tls := .root.Values.tls -}}
{{- if .probe.exec -}}
exec:
  command:
    {{- toYaml .probe.exec | nindent 4 }}
{{- else if $tls.enabled -}}
{{- /* Kubernetes' gRPC probes speak plaintext only: over TLS, the image's
       roost-admin asks the same health service. */}}
exec:
  command:
    - roost-admin
    - --lookup-addr=127.0.0.1:{{ .root.Values.ports.grpc }}
    - --tls-ca=/etc/roost/tls/{{ $tls.probe.caKey }}
    - --tls-server-name={{ $tls.probe.serverName }}
    {{- if $tls.clientCA.secretName }}
    - --tls-cert=/etc/roost/tls/tls.crt
    - --tls-key=/etc/roost/tls/tls.key
    {{- end }}
    - --timeout={{ .probe.timeoutSeconds }}
    - health
    - --service={{ .probe.service }}
{{- else -}}
grpc:
  port: {{ .root.Values.ports.grpc }}
  service: {{ .probe.service | quote }}
{{- end }}
periodSeconds: {{ .probe.periodSeconds }}
timeoutSeconds: {{ .probe.timeoutSeconds }}
failureThreshold: {{ .probe.failureThreshold }}
{{- end }}

{{/*
A number for a flag: values files give every number as a float, which
prints 268435456 as 2.68435456e+08; whole numbers print whole.
*/}}
{{- define "roost.number" -}}
{{- if eq (float64 .) (float64 (int64 .)) }}{{ int64 . }}{{ else }}{{ . }}{{ end }}
{{- end }}
