{{/* Names. Cluster-scoped objects (ClusterRoles) carry the full name, so two releases never collide. */}}
{{- define "vigil.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vigil.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "vigil.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "vigil.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The reader ServiceAccount: the pod runs as it; get/list/watch only. */}}
{{- define "vigil.readerName" -}}
{{- include "vigil.fullname" . -}}
{{- end -}}

{{/* The executor ServiceAccount: no pod runs as it; impersonated (or a TokenRequest) per approved action. */}}
{{- define "vigil.executorName" -}}
{{- printf "%s-executor" (include "vigil.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vigil.slackSecret" -}}
{{- default (printf "%s-slack" (include "vigil.fullname" .)) .Values.slack.existingSecret -}}
{{- end -}}

{{- define "vigil.labels" -}}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "vigil.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: bot
{{- end -}}

{{/* Split mode's executor pod: the same name and instance, component executor, so no selector of the bot's
     (Service, PDB, NetworkPolicy) matches it and none of its own matches the bot. */}}
{{- define "vigil.executorSelectorLabels" -}}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: executor
{{- end -}}

{{/* Does the executor take Slack's requests over HTTP (its Request URL) rather than Socket Mode? */}}
{{- define "vigil.executorHttp" -}}
{{- $m := .Values.executor.split.slackMode -}}
{{- if or (eq $m "http") (and (eq $m "") (not .Values.executor.split.appToken)) -}}true{{- end -}}
{{- end -}}

{{/* Egress both pods share: cluster DNS, the API server, HTTPS on public addresses (Slack, the model API). */}}
{{- define "vigil.baseEgress" -}}
{{- $np := .Values.networkPolicy -}}
- to:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: {{ $np.dns.namespace }}
      podSelector:
        matchLabels:
          {{- toYaml $np.dns.podLabels | nindent 10 }}
  ports:
    - {port: 53, protocol: UDP}
    - {port: 53, protocol: TCP}
- ports:
    {{- range $np.apiServer.ports }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
  {{- with $np.apiServer.cidrs }}
  to:
    {{- range . }}
    - ipBlock: {cidr: {{ . }}}
    {{- end }}
  {{- end }}
- ports:
    {{- range $np.internet.ports }}
    - {port: {{ . }}, protocol: TCP}
    {{- end }}
  to:
    {{- range $np.internet.cidrs }}
    - ipBlock:
        cidr: {{ . }}
        {{- with $np.internet.except }}
        except:
          {{- toYaml . | nindent 10 }}
        {{- end }}
    {{- end }}
{{- end -}}

{{/* A subject block for one of the two ServiceAccounts: (dict "name" … "namespace" …). */}}
{{- define "vigil.saSubject" -}}
subjects:
  - kind: ServiceAccount
    name: {{ .name }}
    namespace: {{ .namespace }}
{{- end -}}

{{/* The executor is reachable (impersonation or TokenRequest) only when it has something to do. */}}
{{- define "vigil.executorEnabled" -}}
{{- if or .Values.executor.namespaces .Values.executor.cordonNodes -}}true{{- end -}}
{{- end -}}

{{/* The credentials Secret the chart creates, only when a value for it is given. */}}
{{- define "vigil.credentialsData" -}}
{{- $d := dict -}}
{{- if .Values.model.apiKey -}}
{{- $_ := set $d (ternary "OPENAI_API_KEY" "ANTHROPIC_API_KEY" (eq .Values.model.provider "openai")) .Values.model.apiKey -}}
{{- end -}}
{{- with .Values.evidence.prometheus.bearerToken }}{{ $_ := set $d "PROMETHEUS_BEARER_TOKEN" . }}{{ end -}}
{{- with .Values.evidence.loki.bearerToken }}{{ $_ := set $d "LOKI_BEARER_TOKEN" . }}{{ end -}}
{{- with .Values.evidence.github.token }}{{ $_ := set $d "GITHUB_TOKEN" . }}{{ end -}}
{{- with .Values.alertmanager.webhookToken }}{{ $_ := set $d "VIGIL_ALERTMANAGER_WEBHOOK_TOKEN" . }}{{ end -}}
{{- with .Values.metrics.token }}{{ $_ := set $d "VIGIL_METRICS_TOKEN" . }}{{ end -}}
{{- if $d }}{{ toYaml $d }}{{ end -}}
{{- end -}}
