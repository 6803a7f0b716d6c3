{{- define "c.fullname" -}}{{ .Release.Name }}-{{ .Chart.Name }}{{- end -}}
