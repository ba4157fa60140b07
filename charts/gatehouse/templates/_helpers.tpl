{{/* Names, labels and the pieces every per-component template shares. */}}

{{- define "gatehouse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-<chart>, or the release name alone when it already contains the chart name. */}}
{{- define "gatehouse.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's name from its key in .Values.components: pushHub → push-hub. */}}
{{- define "gatehouse.componentName" -}}
{{- kebabcase . -}}
{{- end -}}

{{/* The name of a component's resources. Call with (dict "root" $ "key" $key). */}}
{{- define "gatehouse.componentFullname" -}}
{{- printf "%s-%s" (include "gatehouse.fullname" .root | trunc 50 | trimSuffix "-") (include "gatehouse.componentName" .key) -}}
{{- end -}}

{{/* Labels that select a component's pods. Call with (dict "root" $ "key" $key). */}}
{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gatehouse.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ include "gatehouse.componentName" .key }}
{{- end -}}

{{/* Every label of a resource; with "key", also the component's. Call with (dict "root" $ ["key" $key]). */}}
{{- define "gatehouse.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "gatehouse.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: gatehouse
{{- with .key }}
app.kubernetes.io/component: {{ include "gatehouse.componentName" . }}
{{- end }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "gatehouse.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "gatehouse.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gatehouse.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The chart creates the auth Secret unless an existing one is named. */}}
{{- define "gatehouse.createsAuthSecret" -}}
{{- if not .Values.auth.existingSecret -}}
true
{{- end -}}
{{- end -}}

{{/* The Secret the pods read JWT_SECRET_KEY, TOKEN_SECRET and INTERNAL_API_TOKEN from. */}}
{{- define "gatehouse.authSecretName" -}}
{{- if .Values.auth.existingSecret -}}
{{- .Values.auth.existingSecret -}}
{{- else -}}
{{- printf "%s-auth" (include "gatehouse.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
One base64 value of the chart's Secret: the given value, else what the Secret in the cluster already
holds under the key (an upgrade), else 48 random characters (the first install).
Call with (dict "value" $value "existing" $secretData "key" $key).
*/}}
{{- define "gatehouse.keptSecret" -}}
{{- if .value -}}
{{- .value | b64enc -}}
{{- else if hasKey .existing .key -}}
{{- index .existing .key -}}
{{- else -}}
{{- randAlphaNum 48 | b64enc -}}
{{- end -}}
{{- end -}}

{{/*
The environment of a component's container. Call with (dict "root" $ "key" $key "c" $component).
The settings the chart derives (ports, brokers, drain time …) form one map; the chart-wide env and
then the component's env override it by name, so no name appears twice. REPLICA_ID and the Secret
references follow unless env names them too; the EnvVar lists (extraEnv) come last.
*/}}
{{- define "gatehouse.env" -}}
{{- $root := .root -}}
{{- $c := .c -}}
{{- $v := $root.Values -}}
{{- $derived := dict "HOST" "0.0.0.0" "API_PORT" $c.ports.api "LOG_LEVEL" $v.log.level "LOG_FMT" $v.log.format "SHUTDOWN_DRAIN_TIMEOUT_MS" (mul $c.drainTimeoutSeconds 1000) -}}
{{- with $c.ports.public }}{{ $_ := set $derived "INBOUND_PORT" . }}{{ end -}}
{{- if and $v.internalApi.tokenAuth $v.internalApi.metricsOpen }}{{ $_ := set $derived "INTERNAL_API_METRICS_OPEN" "true" }}{{ end -}}
{{- with $v.tracing.otlpEndpoint }}{{ $_ := set $derived "OTEL_EXPORTER_OTLP_ENDPOINT" . }}{{ end -}}
{{- with $v.tracing.zipkinEndpoint }}{{ $_ := set $derived "OTEL_TRACES_EXPORTER" "zipkin" }}{{ $_ := set $derived "OTEL_EXPORTER_ZIPKIN_ENDPOINT" . }}{{ end -}}
{{- with $v.tracing.resourceAttributes }}{{ $_ := set $derived "OTEL_RESOURCE_ATTRIBUTES" . }}{{ end -}}
{{- with $c.ports.http }}{{ $_ := set $derived "REST_SERVER_PORT" . }}{{ end -}}
{{- if eq .key "pushHub" -}}
{{- with $v.access.connectCheck }}{{ $_ := set $derived "CONNECT_CHECK" . }}{{ end -}}
{{- with $v.access.connectCheckHeaders }}{{ $_ := set $derived "CONNECT_CHECK_HEADERS" (join "," .) }}{{ end -}}
{{- end -}}
{{- /* The proxy refuses private targets unless listed: the release's REST engine is (env overrides). */}}
{{- if and (eq .key "proxy") $v.components.restEngine.enabled }}{{ $_ := set $derived "PROXY_TARGET_ALLOW" (include "gatehouse.componentFullname" (dict "root" $root "key" "restEngine")) }}{{ end -}}
{{- /* The REST engine's flow adapters: the mounted files, and the brokers they read. */}}
{{- with $c.flowAdapters -}}
{{- if .kafka -}}
{{- $_ := set $derived "YAML_KAFKA_FLOW_ADAPTER" "file:/etc/gatehouse/flow-adapters/kafka-flow-adapter.yaml" -}}
{{- $_ := set $derived "KAFKA_CLIENT_ID" $v.kafka.clientId -}}
{{- $_ := set $derived "KAFKA_SSL_ENABLED" $v.kafka.ssl -}}
{{- with $v.kafka.brokers }}{{ $_ := set $derived "KAFKA_BROKERS" (join "," .) }}{{ end -}}
{{- end -}}
{{- if .nats -}}
{{- $_ := set $derived "YAML_NATS_FLOW_ADAPTER" "file:/etc/gatehouse/flow-adapters/nats-flow-adapter.yaml" -}}
{{- with $v.nats.servers }}{{ $_ := set $derived "NATS_SERVERS" (join "," .) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if $c.brokers -}}
{{- $_ := set $derived "REDIS_URL" $v.redis.url -}}
{{- $_ := set $derived "REDIS_CLUSTER" $v.redis.cluster -}}
{{- $_ := set $derived "STORE" "redis" -}}
{{- $_ := set $derived "STORE_KEY_PREFIX" $v.redis.keyPrefix -}}
{{- $_ := set $derived "REDIS_SET_KEYSPACE_EVENTS" $v.redis.setKeyspaceEvents -}}
{{- $_ := set $derived "FANOUT_BUS" $v.fanoutBus -}}
{{- $_ := set $derived "CONTROL_BUS" $v.controlBus -}}
{{- $_ := set $derived "KAFKA_CLIENT_ID" $v.kafka.clientId -}}
{{- $_ := set $derived "KAFKA_SSL_ENABLED" $v.kafka.ssl -}}
{{- with $v.kafka.brokers }}{{ $_ := set $derived "KAFKA_BROKERS" (join "," .) }}{{ end -}}
{{- with $v.nats.servers }}{{ $_ := set $derived "NATS_SERVERS" (join "," .) }}{{ end -}}
{{- end -}}
{{- /* Interest routing: the writers (publisher, the REST engine's flows) and the readers (push hub) of the fan-out stream. */}}
{{- if and $c.brokers (has .key (list "pushHub" "publisher" "restEngine")) }}{{ $_ := set $derived "FANOUT_ROUTING" $v.fanoutRouting }}{{ end -}}
{{- /* Lifecycle events: the push hub only, and only with a topic (off by default). */}}
{{- if and (eq .key "pushHub") $v.lifecycleEvents.topic -}}
{{- $_ := set $derived "LIFECYCLE_EVENTS_TOPIC" $v.lifecycleEvents.topic -}}
{{- $_ := set $derived "LIFECYCLE_EVENTS_BUS" $v.lifecycleEvents.bus -}}
{{- end -}}
{{- /* The schema registry: only the proxy (Avro writes, the request log), the publisher (Avro reads) and the REST engine (a flow's kafka.notification with a schema). */}}
{{- $registry := $v.kafka.schemaRegistry -}}
{{- $readsRegistry := and $registry.url (has .key (list "proxy" "publisher" "restEngine")) -}}
{{- if $readsRegistry -}}
{{- $_ := set $derived "KAFKA_SCHEMA_REGISTRY_HOST" $registry.url -}}
{{- with $registry.caFile }}{{ $_ := set $derived "KAFKA_SCHEMA_REGISTRY_CA_FILE" . }}{{ end -}}
{{- with $registry.certFile }}{{ $_ := set $derived "KAFKA_SCHEMA_REGISTRY_CERT_FILE" . }}{{ end -}}
{{- with $registry.keyFile }}{{ $_ := set $derived "KAFKA_SCHEMA_REGISTRY_KEY_FILE" . }}{{ end -}}
{{- end -}}
{{- range $choice := include "gatehouse.choices" $root | fromJsonArray -}}
{{- if and (include "gatehouse.reads" (dict "choice" $choice "key" $.key "c" $c)) (not (kindIs "invalid" $choice.value)) -}}
{{- $_ := set $derived $choice.name (ternary (join "," $choice.value) $choice.value (kindIs "slice" $choice.value)) -}}
{{- end -}}
{{- end -}}
{{- $user := merge (deepCopy (default dict $c.env)) (default dict $v.env) -}}
{{- range $name, $value := merge (deepCopy $user) $derived }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- if not (hasKey $user "REPLICA_ID") }}
- name: REPLICA_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end }}
{{- $secret := include "gatehouse.authSecretName" $root }}
{{- if and $v.internalApi.tokenAuth (not (hasKey $user "INTERNAL_API_TOKEN")) }}
- name: INTERNAL_API_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $v.auth.internalApiTokenKey }}
{{- end }}
{{- if $c.authSecrets }}
{{- if not (hasKey $user "JWT_SECRET_KEY") }}
- name: JWT_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $v.auth.jwtSecretKeyKey }}
      optional: true
{{- end }}
{{- if not (hasKey $user "TOKEN_SECRET") }}
- name: TOKEN_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ $v.auth.tokenSecretKey }}
{{- end }}
{{- end }}
{{- if and $readsRegistry $registry.basicAuthSecret.name (not (hasKey $user "KAFKA_SCHEMA_REGISTRY_BASIC_AUTH")) }}
- name: KAFKA_SCHEMA_REGISTRY_BASIC_AUTH
  valueFrom:
    secretKeyRef:
      name: {{ $registry.basicAuthSecret.name }}
      key: {{ $registry.basicAuthSecret.key }}
{{- end }}
{{- with $v.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with $c.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The settings an operator must choose, for they have no safe default: who may push events to every
browser, who may subscribe, and which issuers and audiences a token may come from. A JSON list of
{name, param, value, anyChosen, reader, hint}: the variable, the value's path, the value (null or ""
when not chosen; for anyChosen ones "" and [] are a choice: "any"), and which components read it
(a comma list of component keys, or "authSecrets": every one that checks tokens). templates/choices.yaml stops the install while one is
missing; gatehouse.env passes each to its readers.
*/}}
{{- define "gatehouse.choices" -}}
{{- $v := .Values -}}
{{- list
  (dict "name" "SUBMISSION_CHECK" "param" "access.submissionCheck" "value" $v.access.submissionCheck "anyChosen" false "reader" "publisher,restEngine" "hint" "jwt_validation, the URL of a check service, or no_check (anyone may push events to every browser)")
  (dict "name" "SUBSCRIPTION_CHECK" "param" "access.subscriptionCheck" "value" $v.access.subscriptionCheck "anyChosen" false "reader" "pushHub" "hint" "jwt_validation, the URL of a check service, or no_check (anyone may subscribe to every event type)")
  (dict "name" "JWT_ISSUER" "param" "auth.jwtIssuer" "value" $v.auth.jwtIssuer "anyChosen" true "reader" "authSecrets" "hint" "the iss values your tokens carry, or [] to accept any issuer")
  (dict "name" "JWT_AUDIENCE" "param" "auth.jwtAudience" "value" $v.auth.jwtAudience "anyChosen" true "reader" "authSecrets" "hint" "the aud values your tokens carry, or [] to accept any audience")
  | toJson -}}
{{- end -}}

{{/* Whether a choice was made: a value, or its variable in the chart-wide env or a reader's. Call with (dict "root" $ "choice" $choice). */}}
{{- define "gatehouse.chosen" -}}
{{- $choice := .choice -}}
{{- $v := .root.Values -}}
{{- $value := $choice.value -}}
{{- $chosen := or (and $choice.anyChosen (not (kindIs "invalid" $value))) (and (not (kindIs "invalid" $value)) (not (empty $value))) -}}
{{- if hasKey (default dict $v.env) $choice.name }}{{ $chosen = true }}{{ end -}}
{{- range $key, $c := $v.components }}
{{- if and (include "gatehouse.reads" (dict "choice" $choice "key" $key "c" $c)) (hasKey (default dict $c.env) $choice.name) }}{{ $chosen = true }}{{ end -}}
{{- end -}}
{{- if $chosen }}true{{ end -}}
{{- end -}}

{{/* Whether a component reads a choice. Call with (dict "choice" $choice "key" $key "c" $component). */}}
{{- define "gatehouse.reads" -}}
{{- if or (has .key (splitList "," .choice.reader)) (and (eq .choice.reader "authSecrets") .c.authSecrets) }}true{{ end -}}
{{- end -}}

{{/* The labels of one alert: its severity, then the operator's for every alert. Call with (dict "rule" <rule values> "root" $). */}}
{{- define "gatehouse.alertLabels" -}}
severity: {{ .rule.severity }}
{{- with .root.Values.prometheusRule.alertLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}
