{{/* Names and labels. */}}
{{- define "hypercache.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* At most 52 characters: the StatefulSet's controller-revision-hash label adds 11 (63 in all). */}}
{{- define "hypercache.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The headless Service that gives each pod its DNS name (seeds and advertised addresses). */}}
{{- define "hypercache.headless" -}}
{{- printf "%s-headless" (include "hypercache.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hypercache.peerTokenSecret" -}}
{{- default (printf "%s-peer-token" (include "hypercache.fullname" .)) .Values.peer.token.existingSecret -}}
{{- end -}}

{{- define "hypercache.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hypercache.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hypercache.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "hypercache.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: hypercache
{{- end -}}

{{/*
Bytes in a Kubernetes memory quantity ("1Gi", "1536Mi", "2G", "1073741824"), as a float.
*/}}
{{- define "hypercache.memoryBytes" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) -}}
{{- float64 . -}}
{{- else -}}
{{- $q := toString . -}}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $suffix := trimPrefix $number $q -}}
{{- $factors := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- if or (not $number) (not (hasKey $factors $suffix)) -}}
{{- fail (printf "resources.limits.memory: cannot read the quantity %q (use bytes or Ki, Mi, Gi, Ti, k, M, G, T)" $q) -}}
{{- end -}}
{{- mulf (float64 $number) (get $factors $suffix) -}}
{{- end -}}
{{- end -}}

{{/*
--max-old-space-size in MiB: heapPercentOfMemoryLimit percent of the memory limit, rounded down.
*/}}
{{- define "hypercache.maxOldSpaceMiB" -}}
{{- $bytes := include "hypercache.memoryBytes" .Values.resources.limits.memory | float64 -}}
{{- $mib := divf (mulf $bytes .Values.heapPercentOfMemoryLimit) (mulf 100 1048576) | floor | int -}}
{{- if lt $mib 64 -}}
{{- fail (printf "resources.limits.memory %s leaves a heap of %d MiB; give the node at least 64 MiB of heap" .Values.resources.limits.memory $mib) -}}
{{- end -}}
{{- $mib -}}
{{- end -}}

{{/* Checks that cannot be said in values.schema.json. */}}
{{- define "hypercache.validate" -}}
{{- /* After the drain the server announces its leave (up to 5 s), gives in-flight client requests
       up to 30 s, stops its loops and exporters (up to 10 s); 5 s more of margin: 50 s. */ -}}
{{- $floor := add .Values.preStopSleepSeconds .Values.drainTimeoutSeconds 50 -}}
{{- if le (int64 .Values.terminationGracePeriodSeconds) (int64 $floor) -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds + drainTimeoutSeconds + 50 = %d (after the drain the node needs up to 50 s to leave, finish in-flight requests and stop), or the kubelet kills a stopping node" (int64 .Values.terminationGracePeriodSeconds) (int64 $floor)) -}}
{{- end -}}
{{- /* The server refuses two listeners on one port (exit 2: "port N is already used"). */ -}}
{{- $api := int64 .Values.ports.api -}}
{{- $mgmt := int64 .Values.ports.mgmt -}}
{{- $peer := int64 .Values.ports.peer -}}
{{- range $pair := list (list "api" $api "mgmt" $mgmt) (list "api" $api "peer" $peer) (list "mgmt" $mgmt "peer" $peer) -}}
{{- if eq (index $pair 1) (index $pair 3) -}}
{{- fail (printf "ports.%s and ports.%s are both %d: each listener needs a port of its own (the server would refuse to start: port %d is already used)" (index $pair 0) (index $pair 2) (index $pair 1) (index $pair 1)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.tls.api.verifyClients (not .Values.tls.api.secretName) -}}
{{- fail "tls.api.verifyClients needs tls.api.secretName (its ca.crt verifies the clients)" -}}
{{- end -}}
{{- if and .Values.auth.oidc.issuer (not .Values.auth.oidc.audience) -}}
{{- fail "auth.oidc.issuer needs auth.oidc.audience" -}}
{{- end -}}
{{- end -}}
